import { loadingAndExecutionFaults } from './isolated-faults.ts';

loadingAndExecutionFaults('worker');
