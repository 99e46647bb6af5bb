import { Compile } from 'typebox/compile';
import { HostConfigSchema } from '../core/config-schema.ts';
const c = Compile(HostConfigSchema);
console.log(JSON.stringify(c.Errors({polcy: {}, policy: {defualt: 'allow'}, plugins: [{module: 'x', isolaton: 'worker'}], log: {levl: 'x'}})));
