import type { Stats } from 'node:fs';

/** A file type in words, for messages and `ls`. */
export function kindOf(stat: Stats): 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other' {
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'dir';
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isBlockDevice() || stat.isCharacterDevice()) return 'device';
  return 'other';
}
