/**
 * The wait for a person's answer when the policy says `ask`: who is asked (the call's own approver,
 * then the host's), what ends the wait (the caller's cancel, the host's close; never a timeout, a
 * person may take their time), and how the answer reads in the result and in the audit trail.
 */
import { abortable } from './abortable.ts';
import { messageOf } from './errors.ts';
import type { Logger } from './log.ts';
import type { Step } from './step.ts';
import type { Policy, PolicyDecision } from './policy.ts';
import type { RegisteredTool } from './registry.ts';
import type { ApproveFn, CallOptions } from './types.ts';

/** What of a call the approval reads, and where it adds the time it waited. */
export interface AskingCall {
  readonly env: { approve?: ApproveFn; closing: AbortSignal; policy: Policy; log: Logger };
  readonly id: string;
  readonly options: CallOptions;
  approvalMs?: number;
}

/** What the policy decided on, and the canonical input the approver is shown. */
interface Asked {
  tool: RegisteredTool;
  decision: PolicyDecision;
  canonical: () => string;
}

/** The policy's decision after approval (`ok: false`: the call does not run), how an `ask` was answered and by whom. */
export type Verdict = Step & { answer?: Answer; answeredBy?: string; approvalMs?: number };

/** How an `ask` was answered, for the audit trail. */
type Answer = 'approved' | 'approved_always' | 'refused' | 'no_approver' | 'prompt_failed' | 'cancelled';

/**
 * Asks the call's approver (or the host's) about an `ask`, and refuses a `deny` with its reason.
 * The time it waits is added to the call's `approvalMs`, which its `durationMs` leaves out.
 */
export async function approve(call: AskingCall, decided: Asked, signal?: AbortSignal): Promise<Verdict> {
  const { env, id: callId } = call;
  const { tool, decision, canonical } = decided;
  const { sessionId } = call.options;
  const rule = decision.rule ? ` (policy rule ${decision.rule.id})` : ' (the default policy)';
  const because = `${decision.reason ? `: ${decision.reason}` : ''}${rule}`;
  if (decision.decision === 'deny') {
    return {
      ok: false,
      code: 'denied',
      content: `Call to "${tool.info.name}" denied${because}. Do not retry it; try another way or ask the user.`,
    };
  }
  // The call's own approver (the MCP client that made it, say) before the host's.
  const approver: ApproveFn | undefined = call.options.approve ?? env.approve;
  if (!approver) {
    return {
      answer: 'no_approver',
      ok: false,
      code: 'denied',
      content: `Call to "${tool.info.name}" needs approval${because}, and no one can approve it here (no terminal; run with --yes to approve). Do not retry it.`,
    };
  }
  let answer: Answer = 'refused';
  const by = approver.answeredBy === undefined ? {} : { answeredBy: approver.answeredBy };
  const asked = performance.now();
  const waited = () => {
    const approvalMs = performance.now() - asked;
    call.approvalMs = (call.approvalMs ?? 0) + approvalMs;
    return approvalMs;
  };
  // A person may take their time: no timeout here, but the caller's cancel and the host's close end the wait.
  const stop = signal ? AbortSignal.any([signal, env.closing]) : env.closing;
  try {
    const request = { tool: tool.info, input: canonical(), decision, callId, ...(sessionId ? { sessionId } : {}) };
    const given = await abortable(stop.aborted ? undefined : approver(request), { signal: stop });
    if (given === 'always') env.policy.allowForSession(tool.info.name, canonical(), call.options);
    if (given === true || given === 'always') {
      return { ok: true, answer: given === true ? 'approved' : 'approved_always', ...by, approvalMs: waited() };
    }
  } catch (error) {
    if (stop.aborted) {
      return {
        answer: 'cancelled',
        ...by,
        approvalMs: waited(),
        ok: false,
        code: 'cancelled',
        content: `Call to "${tool.info.name}" was cancelled while waiting for approval.`,
      };
    }
    answer = 'prompt_failed';
    env.log.warn(`approval prompt failed: ${messageOf(error)}`);
  }
  return {
    answer,
    ...by,
    approvalMs: waited(),
    ok: false,
    code: 'denied',
    // Asking failed (a client's answer that does not fit the form): no one said no, and the
    // message, for the model, leaves the reason to the host's log.
    content:
      answer === 'prompt_failed'
        ? `Call to "${tool.info.name}" was denied: asking for approval failed (the host's log says why). Do not retry it; ask the user what to do instead.`
        : `Call to "${tool.info.name}" was denied by the user. Do not retry it; ask the user what to do instead.`,
  };
}
