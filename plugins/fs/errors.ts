/**
 * The fs tools' failures. Each carries a stable code (also at the end of the message, which is what
 * the model reads) so a caller can tell "outside the workspace" from "not found" without parsing.
 */
export type FsErrorCode =
  | 'invalid_path'
  | 'outside_workspace'
  | 'symlink_escape'
  | 'dangling_symlink'
  | 'write_protected'
  | 'not_found'
  | 'not_a_file'
  | 'not_a_directory'
  | 'binary_file'
  | 'too_large'
  | 'invalid_pattern'
  | 'pattern_too_slow'
  | 'no_match'
  | 'not_unique'
  | 'invalid_edit'
  | 'offset_past_end';

export class FsToolError extends Error {
  override readonly name = 'FsToolError';
  readonly code: FsErrorCode;
  constructor(code: FsErrorCode, message: string) {
    super(`${message} [${code}]`);
    this.code = code;
  }
}

/** The errno code of a Node fs error, if any. */
export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}
