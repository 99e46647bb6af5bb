import { loadingAndExecutionFaults } from './isolated-faults.ts';

loadingAndExecutionFaults('process');
