// ctx.elicit and ctx.sample in every isolation: the question reaches the call's handler (across the
// wire from a worker or a process), the answer comes back checked, and the call's bounds hold: no
// handler is an error that says so, one question at a time, cancellation ends the wait, and the
// tool's clock stands still while the user answers.
import { expect } from 'chai';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ElicitRequest, SampleRequest } from '../../core/contract.ts';
import { createHost, type Host } from '../../core/host.ts';
import type { Asking, CallResult } from '../../core/types.ts';
import { FIXTURES, until } from '../helpers.ts';

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 1 },
    size: { type: 'string', enum: ['s', 'm', 'l'], default: 'm' },
    extras: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'milk', title: 'Milk' },
          { const: 'sugar', title: 'Sugar' },
        ],
      },
    },
    cups: { type: 'integer', minimum: 1, maximum: 4 },
    hot: { type: 'boolean' },
  },
  required: ['name'],
};

const answerOf = (result: CallResult) => (result.data as { answer?: unknown }).answer;
const errorOf = (result: CallResult) => (result.data as { error?: string }).error;

for (const isolation of ['inline', 'worker', 'process'] as const) {
  describe(`ctx.elicit and ctx.sample (${isolation})`, function () {
    this.timeout(60_000);
    let host: Host;

    before(async () => {
      host = await createHost({
        cwd: join(FIXTURES, 'plugins'),
        audit: false,
        logLevel: 'error',
        config: {
          builtins: false,
          policy: { default: 'allow' },
          plugins: [{ module: './asking.ts', isolation, loadTimeoutMs: 50_000 }],
        },
      });
      expect(host.plugins()[0]?.status, host.plugins()[0]?.error?.message).to.equal('loaded');
    });
    after(() => host.close());

    it("puts the form to the call's handler and gives the tool the accepted content", async () => {
      const asked: { request: ElicitRequest; from: Omit<Asking, 'signal'> }[] = [];
      const result = await host.call(
        'ask_user',
        { message: 'Your order?', form: FORM },
        {
          sessionId: 's1',
          elicit: async (request, { signal: _, ...from }) => {
            asked.push({ request, from });
            return { action: 'accept', content: { name: 'Ada', size: 'l', extras: ['milk'], cups: 2, hot: true } };
          },
        },
      );
      expect(result.isError, result.content).to.equal(false);
      expect(answerOf(result)).to.deep.equal({
        action: 'accept',
        content: { name: 'Ada', size: 'l', extras: ['milk'], cups: 2, hot: true },
      });
      expect(asked).to.have.length(1);
      expect(asked[0]!.request).to.deep.equal({ message: 'Your order?', requestedSchema: FORM });
      expect(asked[0]!.from).to.deep.include({ tool: 'ask_user', sessionId: 's1' });
    });

    it('passes decline and cancel on as they are', async () => {
      for (const action of ['decline', 'cancel'] as const) {
        const result = await host.call(
          'ask_user',
          { message: 'Go on?', form: FORM },
          { elicit: async () => ({ action }) },
        );
        expect(answerOf(result)).to.deep.equal({ action });
      }
    });

    it('rejects an accepted answer that does not match the form, naming the field', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ size: 'm' }, /no value for required field "name"/],
        [{ name: 'Ada', size: 'xl' }, /"size" that is not one of s, m, l/],
        [{ name: 'Ada', cups: 9 }, /"cups" that is above the maximum 4/],
        [{ name: 'Ada', extras: ['salt'] }, /"extras" that is not a list of choices among milk, sugar/],
        [{ name: 'Ada', colour: 'red' }, /"colour", which is not a field of the form/],
      ];
      for (const [content, why] of cases) {
        const result = await host.call(
          'ask_user',
          { message: 'Your order?', form: FORM },
          { elicit: async () => ({ action: 'accept', content }) as never },
        );
        expect(errorOf(result)).to.match(why);
      }
    });

    it('refuses a form MCP does not allow before anyone is asked', async () => {
      let asked = 0;
      const nested = { type: 'object', properties: { address: { type: 'object', properties: {} } } };
      const result = await host.call(
        'ask_user',
        { message: 'Where?', form: nested },
        {
          elicit: async () => {
            asked++;
            return { action: 'cancel' };
          },
        },
      );
      expect(errorOf(result)).to.match(/requestedSchema field "address" must be a string, number/);
      expect(asked).to.equal(0);
    });

    it('says no one can be asked when the call has no elicit handler; the tool that does not catch gets an error result', async () => {
      const result = await host.call('ask_user', { message: 'Hello?', form: FORM });
      expect(errorOf(result)).to.match(/ctx\.elicit: no one can be asked here/);
    });

    it('allows one open question per call: a second one at once is refused', async () => {
      const result = await host.call(
        'ask_user',
        { message: 'Twice?', form: FORM, twice: true },
        { elicit: () => delay(50, { action: 'cancel' as const }) },
      );
      expect(errorOf(result)).to.match(/another question of this call is still open/);
    });

    it("stops the tool's clock while the user answers (its timeout is 1000 ms)", async () => {
      const result = await host.call(
        'ask_user',
        { message: 'Take your time', form: FORM },
        { elicit: () => delay(1500, { action: 'accept' as const, content: { name: 'slow' } }) },
      );
      expect(result.isError, result.content).to.equal(false);
      expect(answerOf(result)).to.deep.equal({ action: 'accept', content: { name: 'slow' } });
    });

    it("ends a pending question when the call is cancelled, aborting the handler's signal", async () => {
      const controller = new AbortController();
      let handlerSignal: AbortSignal | undefined;
      const pending = host.call(
        'ask_user',
        { message: 'Waiting', form: FORM },
        {
          signal: controller.signal,
          elicit: (_request, { signal }) => {
            handlerSignal = signal;
            return new Promise(() => {});
          },
        },
      );
      await until(() => handlerSignal);
      controller.abort();
      const result = await pending;
      expect(result.code).to.equal('cancelled');
      expect(handlerSignal!.aborted).to.equal(true);
    });

    it("puts ctx.sample to the call's handler, with maxTokens capped, and checks the answer", async () => {
      const asked: SampleRequest[] = [];
      const result = await host.call(
        'ask_model',
        { prompt: 'Say hi', maxTokens: 1_000_000, system: 'Be brief.' },
        {
          sample: async (request) => {
            asked.push(request);
            return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm1', stopReason: 'endTurn' };
          },
        },
      );
      expect(answerOf(result)).to.deep.equal({
        role: 'assistant',
        content: { type: 'text', text: 'hi' },
        model: 'm1',
        stopReason: 'endTurn',
      });
      expect(asked).to.deep.equal([
        {
          messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
          systemPrompt: 'Be brief.',
          maxTokens: 4096,
        },
      ]);
      const bad = await host.call(
        'ask_model',
        { prompt: 'Say hi', maxTokens: 10 },
        { sample: async () => ({ role: 'user', content: { type: 'text', text: 'x' }, model: 'm' }) as never },
      );
      expect(errorOf(bad)).to.match(/the answer to ctx\.sample is not \{ role: "assistant"/);
    });

    it('says no model can be asked when the call has no sample handler', async () => {
      const result = await host.call('ask_model', { prompt: 'Say hi', maxTokens: 10 });
      expect(errorOf(result)).to.match(/ctx\.sample: no model can be asked here/);
    });
  });
}
