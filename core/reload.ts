/**
 * Reloading plugins while the host runs (`host.reload()`, `start --watch`, `/reload`).
 *
 * The new version loads beside the old one, which serves until the new one has passed the contract
 * check; then the registry swaps them in one step. A version that fails (import, setup, contract,
 * a name taken) leaves the old one serving, with the reason logged and kept as its `reloadError`.
 * Calls that found the old version's tool before the swap finish on it: its runner closes only once
 * its concurrency slots are all free. See docs/plugins.md, "Watch mode".
 */
import { messageOf } from './errors.ts';
import { loadEntries, type LoadContext, type PluginEntry } from './loader.ts';
import type { PluginHandle } from './registry.ts';
import type { PluginRunner } from './runners/runner.ts';
import type { PluginStatus } from './types.ts';

export interface Reloader {
  /** Reloads the plugin named `name` (its name or its source as configured), or every plugin. Never throws. */
  reload(name?: string): Promise<PluginStatus[]>;
  /** `listener` is called after a reload changed the tool set; returns the unsubscribe. */
  onToolsChanged(listener: () => void): () => void;
  /** Waits for a reload under way and closes the old versions still finishing calls. */
  close(): Promise<void>;
}

/** `entries` are the loader's, in the registry's order: the i-th handle was loaded from the i-th entry. */
export function createReloader(ctx: LoadContext, entries: readonly PluginEntry[]): Reloader {
  const { registry, log } = ctx;
  const listeners = new Set<() => void>();
  /** Old versions whose calls are still running. */
  const retiring = new Set<PluginHandle>();
  /** Reloads run one after another: two at once could both swap out the same old version. */
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  const toolSet = () => JSON.stringify(registry.tools());

  async function reloadNow(name: string | undefined): Promise<PluginStatus[]> {
    if (closed) return [];
    const handles = registry.handlesList();
    const indices = handles.flatMap((h, i) => (name === undefined || h.name === name || h.source === name ? [i] : []));
    if (!indices.length) {
      log.warn(`reload: no plugin named "${name}" (plugins: ${handles.map((h) => h.name).join(', ') || 'none'})`);
      return [];
    }
    const before = toolSet();
    const loads = loadEntries(
      ctx,
      indices.map((i) => entries[i]!),
      true,
    );
    for (const [k, index] of indices.entries()) {
      const { handle, tools } = await loads[k]!;
      const old = registry.handlesList()[index]!;
      if (closed) {
        await handle.runner?.close();
        continue;
      }
      const failure = handle.error ?? registry.replace(old, handle, tools);
      if (!failure) {
        retire(old);
        log.info(`reloaded plugin ${handle.name} (${tools.length} tools, ${handle.loadMs?.toFixed(1)} ms)`);
        continue;
      }
      await handle.runner?.close();
      delete handle.runner;
      if (old.error) {
        // Nothing served before: the newer reason replaces the older one.
        handle.error = failure;
        registry.replace(old, handle, []);
        log.warn(`plugin ${handle.name} failed again: ${failure.message}`);
      } else {
        old.reloadError = failure;
        log.warn(`plugin ${old.name}: the reload failed, the previous version still serves: ${failure.message}`);
      }
    }
    if (toolSet() !== before) {
      for (const listener of listeners) {
        try {
          listener();
        } catch (error) {
          log.warn(`a tools-changed listener threw: ${messageOf(error)}`);
        }
      }
    }
    const statuses = registry.plugins();
    return indices.map((i) => statuses[i]!);
  }

  /** Closes the old version once no call holds or waits for one of its slots. */
  function retire(old: PluginHandle): void {
    if (!old.runner) return;
    retiring.add(old);
    const finish = (): void => {
      // A call may have taken a slot in the turn between the idle promise and this callback.
      const { active, waiting } = old.limiter.stats;
      if (active || waiting) {
        void old.limiter.whenIdle().then(finish);
        return;
      }
      void shutDown(old);
    };
    void old.limiter.whenIdle().then(finish);
  }

  async function shutDown(old: PluginHandle): Promise<void> {
    if (!retiring.delete(old)) return;
    const runner = old.runner;
    // A call that found the old tool before the swap but reaches its runner only now (it waited
    // for an approval) is told to call again: the old version is gone.
    old.runner = replacedRunner(old);
    try {
      await runner?.close();
    } catch (error) {
      log.warn(`closing the previous version of plugin ${old.name} failed: ${messageOf(error)}`);
    }
  }

  return {
    reload(name) {
      const run = queue.then(() => reloadNow(name));
      queue = run.catch(() => {});
      return run.catch((error: unknown) => {
        log.error(`reload failed: ${messageOf(error)}`);
        return [];
      });
    },
    onToolsChanged(listener) {
      const own = () => listener();
      listeners.add(own);
      return () => void listeners.delete(own);
    },
    async close() {
      closed = true;
      await queue;
      await Promise.all([...retiring].map(shutDown));
    },
  };
}

function replacedRunner(old: PluginHandle): PluginRunner {
  const message = `plugin ${old.name} was reloaded while this call waited; call the tool again`;
  return {
    isolation: old.isolation,
    load: () => Promise.reject(new Error(message)),
    run: () => Promise.resolve({ ok: false, code: 'tool_error', message }),
    close: () => Promise.resolve(),
  };
}
