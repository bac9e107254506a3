// -f and -R, as kubectl takes them: the input flags of render, admit, validate, apply and diff.

export const FILENAME_FLAG = {
  type: 'string',
  short: 'f',
  multiple: true,
  required: true,
  value: 'PATH',
  complete: 'file',
  help: "file, directory (its *.yaml, *.yml and *.json files) or '-' for stdin",
} as const;

export const RECURSIVE_FLAG = {
  type: 'boolean',
  short: 'R',
  help: 'also read the subdirectories of directories given with -f',
} as const;
