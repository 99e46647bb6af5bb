/**
 * The built-in web tool, `http_get`. Written exactly as a third-party plugin is. Its SSRF guard sits
 * in the connection itself (guarded-agent.ts), so no URL trick, DNS answer or redirect gets past it.
 */
import { definePlugin } from 'rousseau-host';
import { createHttpGetTool } from './http-get.ts';
import { HttpOptions } from './options.ts';

export default definePlugin({
  name: 'http',
  version: '1.0.0',
  description: 'Fetch public https:// pages, guarded against requests to private networks.',
  options: HttpOptions,
  tools: [createHttpGetTool()],
});
