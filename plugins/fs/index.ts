/**
 * The built-in file tools: read, write, edit, grep, glob, ls. Written exactly as a third-party
 * plugin is; every path is confined to the workspace (confine.ts), every output is capped.
 */
import { definePlugin } from 'rousseau-host';
import { editTool } from './edit.ts';
import { globTool } from './glob.ts';
import { grepTool } from './grep.ts';
import { lsTool } from './ls.ts';
import { FsOptions } from './options.ts';
import { readTool } from './read.ts';
import { writeTool } from './write.ts';

export default definePlugin({
  name: 'fs',
  version: '1.0.0',
  description: 'Read, write, edit and search files, confined to the workspace.',
  options: FsOptions,
  tools: [readTool, writeTool, editTool, grepTool, globTool, lsTool],
});
