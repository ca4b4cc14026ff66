/**
 * How `npm run client` keeps request and answer types apart (scripts/client.ts `clientDocument`):
 * a named schema with a default that requests and answers share gets an input twin `<Name>Input`
 * (defaults optional) which the requests use, references and discriminator mappings included;
 * a schema only requests use stays as it is; in what answers and webhooks carry, defaulted
 * properties become required. The document given is not changed.
 */
import { clientDocument } from '../../scripts/client';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function toyDocument() {
  return {
    openapi: '3.1.0',
    paths: {
      '/sets': {
        post: {
          requestBody: { content: { 'application/json': { schema: ref('CreateSet') } } },
          responses: { 201: { content: { 'application/json': { schema: ref('Set') } } } },
        },
      },
      '/pay': {
        post: {
          requestBody: { content: { 'application/json': { schema: ref('Pay') } } },
          responses: {
            200: {
              content: { 'application/json': { schema: { type: 'object', properties: { done: { type: 'boolean', default: true } } } } },
            },
          },
        },
      },
    },
    webhooks: {
      'set.created': {
        post: { requestBody: { content: { 'application/json': { schema: ref('SetEvent') } } }, responses: { 200: { description: 'ok' } } },
      },
    },
    components: {
      schemas: {
        CreateSet: {
          type: 'object',
          properties: { name: { type: 'string' }, definition: ref('Definition') },
          required: ['name', 'definition'],
        },
        Set: { type: 'object', properties: { id: { type: 'integer' }, definition: ref('Definition') }, required: ['id', 'definition'] },
        SetEvent: { type: 'object', properties: { set: ref('Set'), plain: ref('Plain') }, required: ['set'] },
        Definition: {
          type: 'object',
          properties: { questions: { type: 'array', items: ref('Question') }, agreements: { type: 'array', default: [] } },
          required: ['questions'],
        },
        Question: {
          oneOf: [ref('Dropdown'), ref('Text')],
          discriminator: {
            propertyName: 'kind',
            mapping: { dropdown: '#/components/schemas/Dropdown', text: '#/components/schemas/Text' },
          },
        },
        Dropdown: {
          type: 'object',
          properties: { kind: { enum: ['dropdown'] }, required: { type: 'boolean', default: true } },
          required: ['kind'],
        },
        Text: { type: 'object', properties: { kind: { enum: ['text'] } }, required: ['kind'] },
        Pay: { type: 'object', properties: { outcome: { enum: ['paid', 'failed'], default: 'paid' } } },
        Plain: { type: 'object', properties: { n: { type: 'integer' } } },
      },
    },
  };
}

test('when the client document is made, then shared schemas with defaults get input twins that requests use, and answers require their defaults', () => {
  const source = toyDocument();
  const before = JSON.stringify(source);
  const doc = clientDocument(source);
  expect(JSON.stringify(source)).toBe(before);
  const s = doc.components.schemas;

  // Twins: every shared schema with a default in it or in what it reaches (Text has none, Plain is answers-only).
  expect(
    Object.keys(s)
      .filter((n) => n.endsWith('Input'))
      .sort(),
  ).toEqual(['DefinitionInput', 'DropdownInput', 'QuestionInput']);
  // Requests point at the twins, whose defaults stay optional (the document's own schema).
  expect(s.CreateSet.properties.definition).toEqual(ref('DefinitionInput'));
  expect(s.DefinitionInput.properties.questions.items).toEqual(ref('QuestionInput'));
  expect(s.DefinitionInput.required).toEqual(['questions']);
  expect(s.QuestionInput.oneOf).toEqual([ref('DropdownInput'), ref('Text')]);
  expect(s.QuestionInput.discriminator.mapping).toEqual({
    dropdown: '#/components/schemas/DropdownInput',
    text: '#/components/schemas/Text',
  });
  expect(s.DropdownInput.required).toEqual(['kind']);
  // A request-only schema stays itself, defaults optional.
  expect(s.Pay.required).toBeUndefined();
  expect(doc.paths['/pay'].post.requestBody.content['application/json'].schema).toEqual(ref('Pay'));

  // Answers and webhooks: the original schemas, defaults required.
  expect(s.Set.properties.definition).toEqual(ref('Definition'));
  expect(s.Definition.required).toEqual(['questions', 'agreements']);
  expect(s.Dropdown.required).toEqual(['kind', 'required']);
  expect(s.Question.discriminator.mapping.dropdown).toBe('#/components/schemas/Dropdown');
  expect(doc.paths['/pay'].post.responses[200].content['application/json'].schema.required).toEqual(['done']);
  expect(doc.webhooks['set.created'].post.requestBody.content['application/json'].schema).toEqual(ref('SetEvent'));
});

test('when a twin’s name is already taken, then it stops rather than merge two schemas', () => {
  const source = toyDocument() as any;
  source.components.schemas.DefinitionInput = { type: 'string' };
  expect(() => clientDocument(source)).toThrow(/already has a schema named DefinitionInput/);
});
