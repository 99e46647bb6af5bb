/**
 * `n` with a comma between thousands, as `n.toLocaleString('en-US')` writes an integer, for the
 * bounds error messages name. Not `toLocaleString`: its first use sets up ICU's number formatting,
 * ~20–28 ms of the host's thread, and a bound's message built at import paid it on every start.
 */
export function thousands(n: number): string {
  return Math.trunc(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
