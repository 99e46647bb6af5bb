/**
 * What a run looks like to the person running it. The answer goes to stdout (streamed in the REPL,
 * rendered as markdown on a terminal); everything else goes to stderr: each tool call, its
 * progress and its outcome, the model's narration, notes and the run's summary.
 *
 * On a terminal (stderr is a TTY) the calls of a turn are a block of lines at the bottom, one per
 * call, redrawn in place as they run: tool, short input, elapsed time, `ctx.progress` (a bar when
 * it has a total), then the result's summary. Off a terminal each call is plain lines, no escape
 * codes: `→` when it starts, `…` for progress (at most once a second), `✓`/`✗` when it ends.
 *
 * While an approval prompt is open (`hold()`) nothing is written: the block is taken off the
 * screen and any output is kept, then shown once the prompt is answered (`release()`), so a
 * concurrent call's result can never land inside the question.
 *
 * Everything shown comes from a model or a plugin and is escaped (terminal-text.ts) before styles
 * are added.
 */
import type { AgentEvent, RunResult } from '../../agent/agent.ts';
import { blockNames } from '../../block-text.ts';
import type { ToolCall } from '../../agent/messages.ts';
import { writeStdout } from '../../mcp/stdout-guard.ts';
import { terminalSafe } from '../../terminal-text.ts';
import type { CallResult, Progress } from '../../types.ts';
import { MarkdownStream } from './markdown.ts';
import { clip, painter, type Paint, type StyleName } from './style.ts';
import { formatUsage } from './usage.ts';

export interface DisplayOptions {
  /** stderr is a terminal: calls are redrawn in place. */
  live: boolean;
  /** Colour on stderr. */
  colour: boolean;
  /** The answer streams to stdout as it arrives (the REPL); otherwise the caller prints it. */
  streamText: boolean;
  /** Render the streamed answer as markdown, with colour or not; `undefined`: write it raw. */
  markdown?: { colour: boolean };
  /** The terminal's width. Default: stderr's columns, else 80. */
  columns?: () => number;
}

interface LiveCall {
  call: ToolCall;
  tool: string;
  started: number;
  progress?: Progress;
  result?: CallResult;
  /** When the last plain progress line was written. */
  lastPlain?: number;
}

const SPINNER = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
const REDRAW_MS = 100;
const PLAIN_PROGRESS_MS = 1000;

export class Display {
  private readonly options: DisplayOptions;
  private readonly paint: Paint;
  private readonly markdown: MarkdownStream | undefined;
  private calls: LiveCall[] = [];
  /** Lines of the live block now on screen, above the cursor. */
  private drawn = 0;
  private timer: NodeJS.Timeout | undefined;
  private held = 0;
  private kept: { stream: 'out' | 'err'; text: string }[] = [];
  /** The last turn's text while not streaming: narration if calls follow, else the answer. */
  private pending = '';

  constructor(options: DisplayOptions) {
    this.options = options;
    this.paint = painter(options.colour);
    if (options.markdown)
      this.markdown = new MarkdownStream(painter(options.markdown.colour), (text) => this.emit('out', text));
  }

  /** Whether the answer reaches stdout through the display, as it arrives. */
  get streamsText(): boolean {
    return this.options.streamText;
  }

  show(event: AgentEvent): void {
    switch (event.type) {
      case 'text_delta':
        if (!this.options.streamText) break;
        if (this.markdown) this.markdown.push(event.text);
        else this.emit('out', terminalSafe(event.text));
        break;
      case 'text':
        if (!this.options.streamText) this.pending = event.text;
        else if (this.markdown) this.markdown.end();
        else this.emit('out', '\n');
        break;
      case 'tool_call':
        this.flushNarration();
        this.start(event.call, event.tool);
        break;
      case 'tool_progress':
        this.progress(event.call, event.progress);
        break;
      case 'tool_result':
        this.finish(event.call, event.result);
        break;
      case 'turn_end':
        this.commit();
        break;
      case 'error':
        this.flushNarration();
        this.commit();
        this.note(`  ! ${event.error.message}`, 'red');
        break;
    }
  }

  /** A line for people on stderr, escaped, kept while a prompt is open. */
  note(text: string, ...styles: StyleName[]): void {
    this.emit('err', `${this.paint(terminalSafe(text), ...styles)}\n`);
  }

  /** The run's last line on stderr: how it ended, its turns, calls and tokens. */
  summary(result: RunResult): void {
    this.pending = '';
    this.commit();
    const usage = formatUsage(result.usage, result.costUsd);
    this.note(
      `  [${result.stopReason}: ${result.turns} turn(s), ${result.toolCalls} tool call(s)${usage ? `, ${usage}` : ''}]`,
      'dim',
    );
  }

  /** An approval prompt opens: take the live block off the screen and keep all output until `release()`. */
  hold(): void {
    if (this.held++ === 0) {
      this.stopTimer();
      this.erase();
    }
  }

  release(): void {
    if (this.held === 0 || --this.held > 0) return;
    const kept = this.kept;
    this.kept = [];
    for (const { stream, text } of kept) this.emit(stream, text);
    this.draw();
    this.startTimer();
  }

  /** Stops redrawing: the display is done. */
  close(): void {
    this.commit();
  }

  private emit(stream: 'out' | 'err', text: string): void {
    if (this.held) {
      this.kept.push({ stream, text });
      return;
    }
    const block = this.drawn > 0;
    if (block) this.erase();
    if (stream === 'out') writeStdout(text);
    else process.stderr.write(text);
    if (block) this.draw();
  }

  /** Text of a turn that went on to call tools is narration: stderr. The last turn's text is the answer. */
  private flushNarration(): void {
    if (this.pending) this.note(this.pending);
    this.pending = '';
  }

  private start(call: ToolCall, tool: string): void {
    const live: LiveCall = { call, tool, started: performance.now() };
    this.calls.push(live);
    if (!this.options.live) {
      this.note(`  → ${tool} ${clip(call.arguments, 160)}`);
      return;
    }
    if (this.held) return;
    this.draw();
    this.startTimer();
  }

  private progress(call: ToolCall, progress: Progress): void {
    const live = this.calls.find((c) => c.call === call);
    if (!live || live.result) return;
    live.progress = progress;
    if (this.options.live) return; // the timer redraws
    const now = performance.now();
    if (live.lastPlain !== undefined && now - live.lastPlain < PLAIN_PROGRESS_MS) return;
    live.lastPlain = now;
    this.note(`  … ${live.tool} ${progressText(progress, this.paint, false)}`);
  }

  private finish(call: ToolCall, result: CallResult): void {
    const live = this.calls.find((c) => c.call === call);
    if (!live) return;
    live.result = result;
    if (!this.options.live) {
      const mark = result.isError ? `✗ ${result.code ?? 'error'}` : '✓';
      this.note(
        `  ${mark} ${live.tool} (${Math.round(result.durationMs)} ms)${blocksNote(result, ' ', '')}: ${clip(result.content, 200)}`,
      );
      return;
    }
    if (this.held) return;
    if (this.calls.every((c) => c.result)) this.commit();
    else this.draw();
  }

  /** The block's lines stay where they are, final; the next turn's calls start a new block. */
  private commit(): void {
    this.stopTimer();
    if (!this.held) this.draw();
    this.drawn = 0;
    this.calls = [];
  }

  private erase(): void {
    if (this.drawn > 0) process.stderr.write(`\u001b[${this.drawn}F\u001b[J`);
    this.drawn = 0;
  }

  private draw(): void {
    if (!this.options.live || !this.calls.length) return;
    const width = Math.max(20, (this.options.columns?.() || process.stderr.columns || 80) - 1);
    const lines = this.calls.map((c) => this.line(c, width));
    const up = this.drawn > 0 ? `\u001b[${this.drawn}F\u001b[J` : '';
    process.stderr.write(`${up}${lines.join('\n')}\n`);
    this.drawn = lines.length;
  }

  /** `⠋ tool {"input"…}  1.2s  [████░░░░] 4/10 message`, then `✓ tool {"input"…}  12 ms  summary`. */
  private line(c: LiveCall, width: number): string {
    const { paint } = this;
    const now = performance.now();
    const icon = c.result
      ? c.result.isError
        ? paint('✗', 'red')
        : paint('✓', 'green')
      : paint(SPINNER[Math.floor(now / REDRAW_MS) % SPINNER.length]!, 'cyan');
    const tool = terminalSafe(c.tool);
    const input = terminalSafe(clip(c.call.arguments, 40));
    const elapsed = c.result ? `${Math.round(c.result.durationMs)} ms` : `${((now - c.started) / 1000).toFixed(1)}s`;
    // What is left of the width after the fixed parts goes to the progress or the result.
    const room = width - (2 + tool.length + 1 + input.length + 2 + elapsed.length + 2);
    let tail = '';
    if (c.result) {
      // The blocks first: a clipped text must not hide that the result holds an image.
      const text = `${blocksNote(c.result, '', ' ')}${c.result.isError ? `${c.result.code ?? 'error'}: ` : ''}${c.result.content}`;
      tail = paint(terminalSafe(clip(text, Math.max(room, 10))), c.result.isError ? 'red' : 'dim');
    } else if (c.progress) tail = progressText(c.progress, paint, true, Math.max(room, 10));
    const head = `${icon} ${paint(tool, 'bold')} ${paint(input, 'dim')}  ${paint(elapsed, 'yellow')}`;
    const line = tail ? `${head}  ${tail}` : head;
    return room < 10 ? `${icon} ${paint(clip(tool, width - 2), 'bold')}` : line;
  }

  private startTimer(): void {
    if (!this.options.live || this.timer || !this.calls.some((c) => !c.result)) return;
    this.timer = setInterval(() => this.draw(), REDRAW_MS);
    this.timer.unref();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** `[image image/png, resource file:///a.pdf]`, between `before` and `after`, when the result holds non-text blocks; else nothing. */
function blocksNote(result: CallResult, before: string, after: string): string {
  const names = blockNames(result.blocks ?? []);
  return names.length ? `${before}[${names.join(', ')}]${after}` : '';
}

/** `[████░░░░░░] 4/10 message` with a total, `message` (or `4`) without. */
function progressText(progress: Progress, paint: Paint, bar: boolean, max = 80): string {
  const message = progress.message ? terminalSafe(progress.message) : '';
  if (progress.total && progress.total > 0) {
    const share = Math.min(1, Math.max(0, progress.done / progress.total));
    const count = `${progress.done}/${progress.total}`;
    const cells = 10;
    const full = Math.round(share * cells);
    const shown = bar
      ? `[${paint('█'.repeat(full), 'cyan')}${paint('░'.repeat(cells - full), 'dim')}] ${count}`
      : `${count} (${Math.round(share * 100)}%)`;
    return message ? `${shown} ${clip(message, Math.max(0, max - cells - count.length - 4))}` : shown;
  }
  return clip(message || String(progress.done), max);
}
