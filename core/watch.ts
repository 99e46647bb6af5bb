/**
 * Watch mode (`start --watch`): each plugin loaded from a file is reloaded when a file in its
 * directory changes. See docs/plugins.md, "Watch mode".
 *
 * Each directory is watched on its own (fs.watch, not recursive): Node's recursive watch on Linux
 * walks every directory below, node_modules included, while here node_modules, dist and dot
 * directories (.git, the host's own .rousseau) are skipped, and a directory created later is
 * picked up from its parent's event.
 */
import { existsSync, readdirSync, realpathSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { messageOf } from './errors.ts';
import type { Host } from './host.ts';
import type { PluginStatus } from './types.ts';

export interface WatchOptions {
  /** Quiet time after the last change before reloading: an editor's save is several events. Default 150. */
  debounceMs?: number;
  /** Told after each reload the watcher started, with the plugins' statuses. */
  onReload?: (statuses: PluginStatus[]) => void;
}

/** The plugins watched (source → root) and the stop function. */
export interface PluginWatch {
  roots: Map<string, string>;
  stop(): void;
}

const SKIPPED_DIRS = new Set(['node_modules', 'dist']);
/**
 * Only code and JSON: a plugin that writes its own files (a log, a cache) next to its code would
 * otherwise reload itself each time, and a reload disposes it, which may write again.
 */
const SOURCE_FILE = /\.(?:[cm]?[jt]sx?|json)$/;

/** Watches every file-based plugin (not built-ins, not MCP servers) and reloads it on change. */
export function watchPlugins(host: Host, options: WatchOptions = {}): PluginWatch {
  const debounceMs = options.debounceMs ?? 150;
  const roots = new Map<string, string>();
  const stops: Array<() => void> = [];
  for (const plugin of host.plugins()) {
    if (!plugin.file || plugin.source.startsWith('builtin:') || roots.has(plugin.source)) continue;
    const root = watchRoot(plugin.file, host.workspace);
    roots.set(plugin.source, root);
    let timer: NodeJS.Timeout | undefined;
    let reloading: Promise<void> | undefined;
    let again = false;
    const reload = (): void => {
      timer = undefined;
      if (reloading) {
        again = true; // one more once this one is done: it may have read the files mid-save
        return;
      }
      reloading = host.reload(plugin.source).then((statuses) => {
        reloading = undefined;
        options.onReload?.(statuses);
        if (again) {
          again = false;
          reload();
        }
      });
    };
    stops.push(
      watchTree(root, host, () => {
        clearTimeout(timer);
        timer = setTimeout(reload, debounceMs);
      }),
      () => clearTimeout(timer),
    );
  }
  return {
    roots,
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}

/**
 * What to watch for a plugin's file: its package's directory when it is a package of its own (the
 * nearest package.json above it, unless that package holds the workspace: the project itself),
 * else the file's directory.
 */
function watchRoot(file: string, workspace: string): string {
  const real = existsSync(file) ? realpathSync(file) : file;
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const workspaceFromPackage = relative(dir, resolve(workspace));
      const holdsWorkspace = !workspaceFromPackage.startsWith('..') && !isAbsolute(workspaceFromPackage);
      return holdsWorkspace ? dirname(real) : dir;
    }
    if (dirname(dir) === dir) return dirname(real);
  }
}

function skipped(name: string): boolean {
  return name.startsWith('.') || name.endsWith('~') || SKIPPED_DIRS.has(name);
}

/** Calls `onChange` for any change below `root` outside skipped names; returns the stop function. */
function watchTree(root: string, host: Host, onChange: () => void): () => void {
  const watchers = new Map<string, FSWatcher>();
  const add = (dir: string): void => {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (!name) return onChange(); // the platform did not say which file: take it for one that counts
        if (skipped(name)) return;
        const path = join(dir, name);
        // A removed directory is forgotten, a new one watched from now on (so is one made again).
        if (!existsSync(path)) forget(path);
        if (addTree(path) || SOURCE_FILE.test(name)) onChange();
      });
    } catch (error) {
      host.log.warn(`watch: cannot watch ${dir}: ${messageOf(error)}`);
      return;
    }
    watcher.on('error', () => forget(dir));
    watchers.set(dir, watcher);
  };
  const forget = (dir: string): void => {
    for (const [path, watcher] of watchers) {
      if (path !== dir && !path.startsWith(`${dir}${sep}`)) continue;
      watcher.close();
      watchers.delete(path);
    }
  };
  /** Watches `dir` and the directories below it; whether `dir` is a directory not watched before. */
  const addTree = (dir: string): boolean => {
    if (watchers.has(dir)) return false;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false; // a file, or gone already
    }
    add(dir);
    for (const entry of entries) if (entry.isDirectory() && !skipped(entry.name)) addTree(join(dir, entry.name));
    return true;
  };
  addTree(root);
  return () => {
    for (const watcher of watchers.values()) watcher.close();
    watchers.clear();
  };
}
