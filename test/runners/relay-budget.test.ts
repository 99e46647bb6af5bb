import { expect } from 'chai';
import { RelayBudget } from '../../core/runners/relay-budget.ts';
import { until } from '../helpers.ts';

describe('RelayBudget (log lines and progress reports an isolate may relay)', () => {
  it('passes `perSecond` in a window, counts the rest, and reports their number once, when the window ends', async () => {
    const reports: string[] = [];
    const budget = new RelayBudget(2, (text) => reports.push(text));
    expect(Array.from({ length: 5 }, () => budget.take())).to.deep.equal([true, true, false, false, false]);
    expect(reports).to.deep.equal([]); // not before the window ends
    await until(() => reports.length > 0, { message: 'the dropped count' });
    expect(reports).to.deep.equal(['dropped 3 log lines and progress reports (over 2 a second)']);
    // A new window passes again, and its drops are counted from zero (past the timer's clock, which
    // may round a millisecond off Date.now's)
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(Array.from({ length: 3 }, () => budget.take())).to.deep.equal([true, true, false]);
    await until(() => reports.length > 1, { message: 'the second dropped count' });
    expect(reports[1]).to.equal('dropped 1 log lines and progress reports (over 2 a second)');
  });
});
