import type { CallOptions } from './types.ts';

/** `CallOptions` with each field present, as `OwnCallOptions` must declare them. */
type EveryCallOption = { [K in keyof Required<CallOptions>]: CallOptions[K] };

/**
 * The caller's options, own properties only: a `sessionId` or `signal` set on Object.prototype
 * would otherwise pick a session's "always" grants, or break the call. Every field is the object's
 * own (`undefined` when not given), so no read reaches a prototype, and all calls share one shape
 * (a null-prototype object would be a slow dictionary). Callbacks (`on…`) are passed on to the
 * runner as they are. It names every field of `CallOptions`: one added there and not here fails
 * to compile, where it would otherwise be dropped from every call without a word.
 */
export class OwnCallOptions implements EveryCallOption {
  signal: CallOptions['signal'] = undefined;
  callId: CallOptions['callId'] = undefined;
  sessionId: CallOptions['sessionId'] = undefined;
  caller: CallOptions['caller'] = undefined;
  onProgress: CallOptions['onProgress'] = undefined;
  onLog: CallOptions['onLog'] = undefined;
  approve: CallOptions['approve'] = undefined;
  elicit: CallOptions['elicit'] = undefined;
  sample: CallOptions['sample'] = undefined;
  onRun: CallOptions['onRun'] = undefined;

  constructor(given: CallOptions | undefined) {
    if (given === undefined) return; // an embedder's plain call: nothing to look up
    if (Object.hasOwn(given, 'signal')) this.signal = given.signal;
    if (Object.hasOwn(given, 'callId')) this.callId = given.callId;
    if (Object.hasOwn(given, 'sessionId')) this.sessionId = given.sessionId;
    if (Object.hasOwn(given, 'caller')) this.caller = given.caller;
    if (Object.hasOwn(given, 'onProgress')) this.onProgress = given.onProgress;
    if (Object.hasOwn(given, 'onLog')) this.onLog = given.onLog;
    if (Object.hasOwn(given, 'approve')) this.approve = given.approve;
    if (Object.hasOwn(given, 'elicit')) this.elicit = given.elicit;
    if (Object.hasOwn(given, 'sample')) this.sample = given.sample;
    if (Object.hasOwn(given, 'onRun')) this.onRun = given.onRun;
  }
}
