import { callsInFlight } from './isolated-faults.ts';

callsInFlight('worker', 2);
