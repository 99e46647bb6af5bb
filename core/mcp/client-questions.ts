/**
 * What an MCP client can answer for a call it made: a tool's `ctx.elicit` (`elicitation/create`),
 * its `ctx.sample` (`sampling/createMessage`), and the policy's `ask` (an elicitation with three
 * choices). Each only when the client declared the capability in `initialize`; without it the call
 * has no handler, and `ctx.elicit` / `ctx.sample` say no one can be asked, `ask` is a denial.
 * The requests go out on the call's own request (`extra.sendRequest`), so over HTTP they reach the
 * client on the call's stream; stateless HTTP has no `initialize` to declare them in, so none go.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type ClientCapabilities,
  CreateMessageResultSchema,
  type ElicitRequestFormParams,
  ElicitResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ElicitResult, ElicitSchema, SampleResult } from '../contract.ts';
import { readElicitResult } from '../questions.ts';
import { approvalText, terminalSafe } from '../terminal-text.ts';
import type { ApproveFn, CallOptions, ElicitHandler, SampleHandler } from '../types.ts';

type Extra = Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, 'sendRequest' | 'signal'>;

/** The answers to an approval question: the values the client sends back, and what each means. */
const APPROVAL_FORM: ElicitSchema = {
  type: 'object',
  properties: {
    decision: {
      type: 'string',
      title: 'Decision',
      oneOf: [
        { const: 'once', title: 'Allow once' },
        { const: 'always', title: 'Allow this exact input for the rest of the session' },
        { const: 'deny', title: 'Deny' },
      ],
    },
  },
  required: ['decision'],
};

/** The handlers of one call, for what `capabilities` says the client can do. */
export function clientHandlers(
  capabilities: ClientCapabilities | undefined,
  extra: Extra,
): Pick<CallOptions, 'elicit' | 'sample' | 'approve'> {
  const handlers: Pick<CallOptions, 'elicit' | 'sample' | 'approve'> = {};
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  // `elicitation: {}` is form mode (the SDK reads it so); a client with URL mode alone cannot fill a form.
  if (elicitation && (elicitation.form || Object.keys(elicitation).length === 0)) {
    // The SDK's types are looser than the answers the host accepts; the call checks each (questions.ts).
    const elicit: ElicitHandler = (request, { signal }) =>
      extra.sendRequest(
        { method: 'elicitation/create', params: request as unknown as ElicitRequestFormParams },
        ElicitResultSchema,
        { signal },
      ) as Promise<ElicitResult>;
    handlers.elicit = elicit;
    handlers.approve = clientApprover(elicit, extra.signal);
  }
  if (capabilities?.sampling) {
    const sample: SampleHandler = (request, { signal }) =>
      extra.sendRequest({ method: 'sampling/createMessage', params: request }, CreateMessageResultSchema, {
        signal,
      }) as Promise<SampleResult>;
    handlers.sample = sample;
  }
  return handlers;
}

const statelessWhy = (capability: string) =>
  `this server is stateless (--stateless), so no request has a session whose client declared ${capability}; serve with sessions for a tool that asks`;

/**
 * The handlers of a call over stateless HTTP: no request there belongs to a session whose
 * `initialize` declared what the client can do, so none is asked, even a client that could answer.
 * They say so, where the error of a call with no handler would send its client's developer to look
 * for a capability their client declares already. `ask` stays a denial that names `--yes`.
 */
export const STATELESS_HANDLERS: Pick<CallOptions, 'elicit' | 'sample' | 'approve'> = {
  elicit: () => Promise.reject(new Error(`ctx.elicit: no one can be asked here: ${statelessWhy('elicitation')}`)),
  sample: () => Promise.reject(new Error(`ctx.sample: no model can be asked here: ${statelessWhy('sampling')}`)),
};

/**
 * The policy's `ask`, put to the client: the tool, its plugin, the rule and the canonical input
 * (escaped as on a terminal: a control or bidi character cannot make the form read otherwise than
 * the input the tool gets, nor padding hide its start: `approvalText`). Anything but a clear "once"
 * or "always" is a no.
 */
function clientApprover(elicit: ElicitHandler, signal: AbortSignal): ApproveFn {
  const approve = async ({ tool, input, decision, callId, sessionId }: Parameters<ApproveFn>[0]) => {
    const { rule } = decision;
    const message = terminalSafe(
      [
        `The tool "${tool.name}" (plugin ${tool.plugin}) needs approval: ${rule ? `policy rule ${rule.id}` : 'the default policy'}${decision.reason ? `, ${decision.reason}` : ''}.`,
        `Input: ${approvalText(input)}`,
      ].join('\n'),
    );
    const answer = readElicitResult(
      await elicit(
        { message, requestedSchema: APPROVAL_FORM },
        { tool: tool.name, callId, ...(sessionId ? { sessionId } : {}), signal },
      ),
      APPROVAL_FORM,
      'the approval question',
    );
    if (answer.action !== 'accept') return false;
    return answer.content.decision === 'always' ? 'always' : answer.content.decision === 'once';
  };
  return Object.assign(approve, { answeredBy: 'mcp-client' });
}
