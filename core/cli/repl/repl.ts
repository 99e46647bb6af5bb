/**
 * The REPL: each line is a run of the agent, or a slash command (commands.ts). Ctrl-C cancels the
 * run in flight; at the prompt it shows how to leave, and a second one within two seconds leaves;
 * Ctrl-D and `/exit` leave too. SIGTERM and SIGHUP end it wherever it is. Every conversation is
 * saved as it goes (sessions.ts), and the session's usage is shown when it ends.
 */
import { clearScreenDown, cursorTo } from 'node:readline';
import { createInterface, type Interface } from 'node:readline/promises';
import type { Agent } from '../../agent/agent.ts';
import type { Message } from '../../agent/messages.ts';
import type { ToolInfo } from '../../types.ts';
import { EXIT } from '../command.ts';
import type { Stop } from '../signals.ts';
import { completer, runCommand, type ReplControl } from './commands.ts';
import type { Display } from './display.ts';
import type { LoadedSession, Session, SessionRecord, SessionStore } from './sessions.ts';
import { painter } from './style.ts';
import { formatUsage, UsageLog } from './usage.ts';
import { messageOf } from '../../errors.ts';

export interface ReplOptions {
  /** An agent for a session: its id, the conversation so far, and a model when `/model` picked one. */
  makeAgent(options: { sessionId: string; messages: readonly Message[]; model?: string }): Agent;
  tools(): readonly ToolInfo[];
  /** Loads plugins again from their files (all, or the one named); lines that say what changed. */
  reload(plugin?: string): Promise<string[]>;
  store: SessionStore;
  display: Display;
  stop: Stop;
  /** Whether the prompt is coloured. */
  colour: boolean;
  /** A saved session to carry on (`--continue`, `--resume`). */
  resume?: LoadedSession;
  /** Receives the writer for lines that come at any time (a reload by `--watch`): above the prompt while it is open. */
  notices?(write: (line: string) => void): void;
}

const EXIT_WINDOW_MS = 2000;

export async function repl(options: ReplOptions): Promise<number> {
  const state = new ReplState(options);
  const { display, stop } = options;
  const paint = painter(options.colour);
  display.note(
    `rousseau-host: ${state.provider.name} (${state.provider.model}). /help lists commands; Ctrl-C cancels a turn; Ctrl-C twice or Ctrl-D exits.`,
  );
  if (options.resume) state.resumed(options.resume);
  const history: string[] = [];
  const prompt = `\n${paint('you>', 'bold', 'green')} `;
  let interruptedAt = 0;
  let open: Interface | undefined;
  options.notices?.((line) => {
    if (!open) return display.note(line);
    // Take the prompt's line (and what is typed on it) off the screen, write the line there, and
    // draw the prompt again below. readline redraws it from one row above the cursor (the prompt
    // starts with a newline): the extra newline keeps the note out of that row.
    cursorTo(process.stderr, 0);
    clearScreenDown(process.stderr);
    display.note(line);
    process.stderr.write('\n');
    open.prompt(true);
  });
  try {
    while (!stop.signal.aborted) {
      const rl = createInterface({
        input: process.stdin,
        output: process.stderr,
        history,
        historySize: 500,
        completer: completer(state),
      });
      open = rl;
      const line = await new Promise<string | 'interrupt' | undefined>((done) => {
        rl.on('SIGINT', () => done('interrupt'));
        rl.on('close', () => done(undefined));
        rl.question(prompt, { signal: stop.signal }).then(done, () => done(undefined));
      });
      open = undefined;
      rl.close();
      if (line === 'interrupt') {
        // Written once readline has let go of the line: printed under its prompt, it would be redrawn away.
        if (Date.now() - interruptedAt < EXIT_WINDOW_MS) break;
        interruptedAt = Date.now();
        process.stderr.write('\n');
        display.note('(press Ctrl-C again to exit)', 'dim');
        continue;
      }
      if (line === undefined) break;
      if (!line.trim()) continue;
      if (line.trimStart().startsWith('/')) {
        if ((await runCommand(state, line)) === 'exit') break;
        continue;
      }
      await state.run(line);
    }
  } finally {
    // The shell's prompt comes next: on a line of its own.
    process.stderr.write('\n');
    state.end();
  }
  return stop.signal.aborted ? EXIT.interrupted : EXIT.ok;
}

/** The conversation, its session file and its usage; what the slash commands act on. */
class ReplState implements ReplControl {
  readonly store: SessionStore;
  usage = new UsageLog();
  private agent: Agent;
  private session: Session;
  private unsaved: Session | undefined;
  private readonly options: ReplOptions;

  constructor(options: ReplOptions) {
    this.options = options;
    this.store = options.store;
    this.session = this.store.open(options.resume);
    this.agent = options.makeAgent({ sessionId: this.session.id, messages: options.resume?.messages ?? [] });
    if (options.resume) for (const run of options.resume.usage) this.usage.add(run.usage, run.costUsd);
  }

  get provider(): { name: string; model: string } {
    return this.agent.provider;
  }

  get sessionId(): string {
    return this.session.id;
  }

  /** A session that cannot be saved is said once; the conversation goes on unsaved. */
  private save(record: SessionRecord): void {
    if (this.unsaved === this.session) return;
    try {
      this.session.write(record);
    } catch (error) {
      this.unsaved = this.session;
      this.options.display.note(`warning: not saving this session: ${messageOf(error)}`, 'yellow');
    }
  }

  private providerNames(): { provider: string; model: string } {
    return { provider: this.provider.name, model: this.provider.model };
  }

  tools(): readonly ToolInfo[] {
    return this.options.tools();
  }

  async reload(plugin?: string): Promise<void> {
    for (const line of await this.options.reload(plugin)) this.say(line);
  }

  say(text: string): void {
    this.options.display.note(text);
  }

  /** One run of the agent: Ctrl-C cancels it; its messages and usage are saved once it ends. */
  async run(line: string): Promise<void> {
    const { stop, display } = this.options;
    const turn = new AbortController();
    const release = stop.onInterrupt(() => {
      display.note('\n(cancelling the turn)', 'dim');
      turn.abort();
    });
    const before = this.agent.messages.length;
    if (before === 0) this.save({ type: 'session', id: this.session.id, ...this.providerNames() });
    try {
      const result = await this.agent.run(line, {
        signal: AbortSignal.any([turn.signal, stop.signal]),
        onEvent: (e) => display.show(e),
      });
      display.summary(result);
      for (const message of this.agent.messages.slice(before)) this.save({ type: 'message', message });
      this.save({
        type: 'usage',
        usage: result.usage,
        ...(result.costUsd === undefined ? {} : { costUsd: result.costUsd }),
      });
      this.usage.add(result.usage, result.costUsd);
    } finally {
      release();
    }
  }

  clear(): void {
    this.session.close();
    this.session = this.store.open();
    this.agent = this.options.makeAgent({ sessionId: this.session.id, messages: [] });
    this.usage = new UsageLog();
    this.say(`New conversation (session ${this.session.id}).`);
  }

  setModel(model: string): void {
    const messages = this.agent.messages;
    let agent: Agent;
    try {
      agent = this.options.makeAgent({ sessionId: this.session.id, messages, model });
    } catch (error) {
      this.say(`Cannot switch to ${model}: ${messageOf(error)}`);
      return;
    }
    this.agent = agent;
    if (messages.length) this.save({ type: 'model', ...this.providerNames() });
    this.say(`Model: ${this.provider.name} (${this.provider.model}).`);
  }

  resume(id: string): void {
    let loaded: LoadedSession;
    try {
      loaded = this.store.load(id);
    } catch (error) {
      this.say(messageOf(error));
      return;
    }
    this.session.close();
    this.session = this.store.open(loaded);
    this.agent = this.options.makeAgent({ sessionId: loaded.id, messages: loaded.messages });
    this.usage = new UsageLog();
    for (const run of loaded.usage) this.usage.add(run.usage, run.costUsd);
    this.resumed(loaded);
  }

  /** Says what was loaded: how much, any damage, and where the conversation left off. */
  resumed(loaded: LoadedSession): void {
    if (loaded.warning) this.options.display.note(`warning: ${loaded.warning}`, 'yellow');
    const users = loaded.messages.filter((m) => m.role === 'user');
    const last = users.at(-1);
    this.say(
      `Resumed session ${loaded.id}: ${loaded.messages.length} message(s)${last?.role === 'user' ? `; last you said: ${last.content}` : ''}`,
    );
    const answer = loaded.messages.findLast((m) => m.role === 'assistant' && m.text);
    if (answer?.role === 'assistant') this.say(`Last answer: ${answer.text}`);
  }

  end(): void {
    this.session.close();
    const total = formatUsage(this.usage.total(), this.usage.totalCost());
    if (total) this.say(`Session ${this.session.id}: ${total}.`);
    if (this.agent.messages.length && this.unsaved !== this.session)
      this.say(`Saved; carry on with: npx rousseau-host start --resume ${this.session.id}`);
  }
}
