import { callsInFlight } from './isolated-faults.ts';

callsInFlight('process', 1);
