import Type from 'typebox';
import { Compile } from 'typebox/compile';
const s = Type.Object({ u: Type.Union([Type.Literal('si'), Type.Literal('us')]), v: Type.Enum(['a','b']), w: Type.Any(), x: Type.Unknown(), r: Type.Record(Type.String(), Type.Number()) });
console.log(JSON.stringify(s));
const c = Compile(s);
console.log(JSON.stringify(c.Errors({u:'xx', v:'c', r: {}}), null, 0));
