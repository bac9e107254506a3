// YAML as Kubernetes reads it: YAML 1.1 scalars and sigs.k8s.io/yaml's conversion to JSON, for every
// manifest the project reads (CLI input, fieldOverrider documents) or writes (render, deploy/).
export { decodeYamlBytes } from './decode.js';
export {
  DEFAULT_LIMITS,
  readYaml,
  readYamlStream,
  YamlError,
  type ReadLimits,
  type ReadResult,
  type YamlProblem,
} from './read.js';
export { readsBackPlain, writeYaml, type WriteOptions } from './write.js';
