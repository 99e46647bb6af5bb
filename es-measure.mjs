import { createParser } from 'eventsource-parser';
for (const [size, chunk] of [[4 * 1024 * 1024, 16384], [8 * 1024 * 1024, 16384], [15 * 1024 * 1024, 65536]]) {
  let events = 0;
  const p = createParser({ maxBufferSize: 16 * 1024 * 1024, onEvent: () => events++, onError: () => {} });
  const line = 'data: ' + 'x'.repeat(size) + '\n\n';
  const t = performance.now();
  for (let i = 0; i < line.length; i += chunk) p.feed(line.slice(i, i + chunk));
  console.log(`${size / 1048576} MiB event in ${chunk}-char pieces: ${(performance.now() - t).toFixed(0)} ms, events ${events}`);
}
