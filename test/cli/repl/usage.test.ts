import { expect } from 'chai';
import { formatUsage, UsageLog } from '../../../core/cli/repl/usage.ts';

describe('cli/repl usage', () => {
  it('shows the cost beside the tokens when the price is known, and none when it is not', () => {
    expect(formatUsage({ inputTokens: 1200, outputTokens: 30, cacheReadTokens: 800 }, 0.00421)).to.equal(
      '1200 in / 30 out tokens, 800 cache read, $0.0042',
    );
    expect(formatUsage({ inputTokens: 10, outputTokens: 2 })).to.equal('10 in / 2 out tokens');
    expect(formatUsage({ inputTokens: 0, outputTokens: 0 }, 0)).to.equal('');
  });

  it('totals the cost of a session only when every run was priced', () => {
    const priced = new UsageLog();
    priced.add({ inputTokens: 100, outputTokens: 10 }, 0.5);
    priced.add({ inputTokens: 50, outputTokens: 5 }, 0.75);
    expect(priced.totalCost()).to.equal(1.25);
    expect(priced.report()).to.equal(
      [
        '  prompt 1: 100 in / 10 out tokens, $0.5000',
        '  prompt 2: 50 in / 5 out tokens, $0.7500',
        '  session: 150 in / 15 out tokens, $1.25',
      ].join('\n'),
    );
    const mixed = new UsageLog();
    mixed.add({ inputTokens: 100, outputTokens: 10 }, 0.5);
    mixed.add({ inputTokens: 50, outputTokens: 5 });
    expect(mixed.totalCost()).to.equal(undefined);
    expect(mixed.report()).to.match(/session: 150 in \/ 15 out tokens$/);
  });
});
