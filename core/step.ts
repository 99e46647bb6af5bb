/** The shape every stage of the call pipeline yields, from finding the tool to reading its output. */
import type { ResultCode } from './errors.ts';

/** A stage of the call pipeline that ends the call: its result code and the text for the model. */
export interface Failed {
  ok: false;
  code: ResultCode;
  content: string;
}

/**
 * What every stage of a call yields (find, prepare, decide, approve, run, read the output): its
 * values beside `ok: true`, or the failure that ends the call. One discriminant, `ok`, all along.
 */
export type Step<T extends object = object> = ({ ok: true } & T) | Failed;
