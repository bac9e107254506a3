export {
  ImageParseError,
  ImageParseReason,
  formatImage,
  isDigest,
  isTag,
  parseImage,
  splitHostname,
  type ImageReference,
} from './parse.js';
export { UnsupportedImageComponentError, overrideImage } from './override.js';
