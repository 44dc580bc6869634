import t from 'tap';
import { publishedDocument } from '../../api/openapi-document.js';

const base = (schemas: Record<string, unknown>, paths: Record<string, unknown> = {}) => ({
  openapi: '3.0.0',
  paths,
  components: { schemas, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
});

t.test('security follows x-svc-permission', async (t) => {
  const emails = () => ({
    post: { 'x-svc-permission': 'sending_access', security: [] },
    get: { 'x-svc-permission': 'full_access', security: [] },
  });
  const generated = base({}, { '/health': { get: { 'x-svc-permission': 'none', security: [] } }, '/emails': emails() });
  const doc = publishedDocument(generated);
  t.same(doc.paths['/health']!.get!.security, []);
  t.same(doc.paths['/emails']!.post!.security, [{ bearer: [] }]);
  t.same(doc.paths['/emails']!.get!.security, [{ bearer: [] }]);
  t.same(generated.paths['/emails'], emails(), 'the generated document is left as it was');
  t.throws(() => publishedDocument({ paths: {}, components: { schemas: {} } }), /bearer/);
});

t.test('nullable always stands beside a type', async (t) => {
  const doc = publishedDocument(base({
    Ref: { type: 'object', properties: {} },
    Body: {
      type: 'object',
      properties: {
        cc: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], nullable: true },
        mode: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'number' }], nullable: true },
        template: { allOf: [{ $ref: '#/components/schemas/Ref' }], nullable: true, description: 'kept' },
        tags: { anyOf: [{ $ref: '#/components/schemas/Ref' }, { type: 'string' }], nullable: true },
        plain: { type: 'string', nullable: true },
      },
    },
  }));
  const props = doc.components.schemas.Body!.properties as Record<string, unknown>;
  t.same(props.cc, { anyOf: [{ type: 'string', nullable: true }, { type: 'array', items: { type: 'string' } }] });
  t.same(props.mode, { anyOf: [{ type: 'string', enum: ['a', 'b', null], nullable: true }, { type: 'number' }] });
  const ref = { $ref: '#/components/schemas/Ref' };
  t.same(props.template, { allOf: [ref], nullable: true, description: 'kept', type: 'object' });
  t.same(props.tags, { anyOf: [{ allOf: [ref], type: 'object', nullable: true }, { type: 'string' }] });
  t.same(props.plain, { type: 'string', nullable: true });
});

t.test('a nullable schema that cannot be given a type stops start-up', async (t) => {
  t.throws(() => publishedDocument(base({ A: { nullable: true } })), /#\/components\/schemas\/A: a nullable schema/);
  t.throws(() => publishedDocument(base({ A: { anyOf: [{ not: {} }], nullable: true } })), /first member has no type/);
  const toUntyped = { A: { allOf: [{ $ref: '#/components/schemas/B' }], nullable: true }, B: { anyOf: [] } };
  t.throws(() => publishedDocument(base(toUntyped)), /has no type/);
});
