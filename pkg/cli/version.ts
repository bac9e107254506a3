/** The release version: `flotilla --version`, and the ApplySet tooling annotation (`flotilla/<version>`). */
export const VERSION = '0.1.0';
