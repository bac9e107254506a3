// pkg/ui's public surface: the server, the hub-backed view and the page's data shapes.
export { UiServer, type UiServerOptions } from './server.js';
export { HubFleetView, type HubFleetViewOptions } from './hub-view.js';
export type { FleetView } from './view.js';
export { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from './headers.js';
export * from './shared/model.js';
