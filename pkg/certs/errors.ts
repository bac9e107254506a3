import { CodedError } from '../../api/internal/errors.js';

export type CertErrorCode = 'INVALID_ARGUMENT' | 'INVALID_CA' | 'INVALID_PAIR';

/**
 * INVALID_ARGUMENT: a name, address or validity that cannot go into a certificate;
 * INVALID_CA: a CA certificate (or key) that cannot be used to sign or to verify;
 * INVALID_PAIR: a certificate and private key that do not parse or do not belong together.
 */
export class CertError extends CodedError<CertErrorCode> {
  constructor(code: CertErrorCode, message: string, options?: { cause?: unknown }) {
    super('CertError', code, message, options);
  }
}
