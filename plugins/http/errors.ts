/**
 * http_get's failures, each with a stable code (also at the end of the message the model reads).
 * got copies an error's `code` onto the RequestError it wraps it in, so the code survives.
 */
export type HttpErrorCode =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'credentials_in_url'
  | 'blocked_address'
  | 'too_many_redirects'
  | 'redirect_denied'
  | 'timeout'
  | 'request_failed';

export class HttpToolError extends Error {
  override readonly name = 'HttpToolError';
  readonly code: HttpErrorCode;
  constructor(code: HttpErrorCode, message: string) {
    super(`${message} [${code}]`);
    this.code = code;
  }
}
