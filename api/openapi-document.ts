type Schema = Record<string, unknown>;

/** The parts of the generated OpenAPI 3.0 document read and completed here. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Record<string, Schema>; securitySchemes?: Record<string, unknown> };
  [key: string]: unknown;
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The document svc serves and routes by: tsoa's output completed with what tsoa cannot say.
 * Applied once when the API module loads, so the served document, the route matcher and the
 * generated file cannot drift apart, whatever built the tree.
 */
export function publishedDocument(generated: unknown): OpenApiDocument {
  const document = structuredClone(generated) as OpenApiDocument;
  declareSecurity(document);
  typeNullables(document, document.components.schemas);
  declareFileParts(document);
  return document;
}

/**
 * The file part of a multipart operation (`x-svc-file-part` names it). tsoa declares a file only
 * through its multer-based upload decorator; svc streams uploads itself (busboy, in the
 * operation's middleware), so the controller declares the text fields and this adds the file as a
 * required binary part of the same form.
 */
function declareFileParts(document: OpenApiDocument): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const operation = item[method];
      const part = operation?.['x-svc-file-part'];
      if (typeof part !== 'string') continue;
      const body = operation!.requestBody as { required?: boolean; content?: Record<string, { schema?: Schema }> } | undefined;
      const schema = body?.content?.['multipart/form-data']?.schema;
      if (!body || !schema) throw new Error(`${method.toUpperCase()} ${path}: x-svc-file-part on an operation without a multipart form`);
      schema.properties = { [part]: { type: 'string', format: 'binary' }, ...(schema.properties as Schema | undefined) };
      schema.required = [part, ...((schema.required as string[] | undefined) ?? [])];
      body.required = true;
    }
  }
}

/**
 * Each operation's `security`, from its `x-svc-permission` — the extension the guard enforces —
 * so the document can never promise a key-free route the guard refuses, or the reverse. tsoa's
 * own `@Security` would also add its authentication middleware to every generated route.
 */
function declareSecurity(document: OpenApiDocument): void {
  if (!document.components.securitySchemes?.bearer) throw new Error('the OpenAPI document has no `bearer` security scheme');
  for (const item of Object.values(document.paths)) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      operation.security = operation['x-svc-permission'] === 'none' ? [] : [{ bearer: [] }];
    }
  }
}

/**
 * OpenAPI 3.0 reads `nullable` only beside a `type`. tsoa writes a nullable union
 * (`string | string[] | null`) as `{anyOf, nullable}` and a nullable reference as
 * `{allOf: [$ref], nullable}`: the first becomes a union whose first member is nullable, the
 * second takes the type of the schema it refers to. Anything else fails start-up (and the tests).
 */
function typeNullables(node: unknown, schemas: Record<string, Schema>, pointer = '#'): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => typeNullables(item, schemas, `${pointer}/${i}`));
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  if (schema.nullable === true && schema.type === undefined) {
    const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    const all = schema.allOf as Schema[] | undefined;
    if (union?.length) {
      union[0] = nullableMember(union[0]!, schemas, pointer);
      delete schema.nullable;
    } else if (all?.length === 1) {
      schema.type = typeOf(all[0]!, schemas, pointer);
    } else {
      throw new Error(`${pointer}: a nullable schema svc cannot give a type`);
    }
  }
  for (const [key, value] of Object.entries(schema)) typeNullables(value, schemas, `${pointer}/${key}`);
}

function nullableMember(member: Schema, schemas: Record<string, Schema>, pointer: string): Schema {
  if (member.$ref !== undefined) return { allOf: [member], type: typeOf(member, schemas, pointer), nullable: true };
  if (member.type === undefined) throw new Error(`${pointer}: a nullable union whose first member has no type`);
  const enumValues = member.enum as unknown[] | undefined;
  return { ...member, nullable: true, ...(enumValues && !enumValues.includes(null) ? { enum: [...enumValues, null] } : {}) };
}

function typeOf(schema: Schema, schemas: Record<string, Schema>, pointer: string): unknown {
  const ref = schema.$ref as string | undefined;
  const target = ref === undefined ? schema : schemas[ref.replace('#/components/schemas/', '')];
  if (target?.type === undefined) throw new Error(`${pointer}: ${ref ?? 'a schema'} has no type to make nullable`);
  return target.type;
}
