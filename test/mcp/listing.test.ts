import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { ALL_TOOLS, connect, makeTempDir, removeDir, serverEnv, SNAPSHOT_TOOLS, type Connected } from './support.js';


interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema & { default?: unknown; const?: unknown; minimum?: number; maximum?: number; minLength?: number; items?: JsonSchema }>;
  required?: string[];
  additionalProperties?: boolean;
}

let tmp: string;
let project: string;
let server: Connected;

beforeAll(async () => {
  tmp = makeTempDir();
  project = path.join(tmp, 'project');
  fs.mkdirSync(project);
  server = await connect(['--root', project], { env: serverEnv(path.join(tmp, 'cache')) });
});

afterAll(async () => {
  await server.close();
  removeDir(tmp);
});

describe('tool listing', () => {
  it('lists exactly the cairn tools, the seed name among them, each with a description saying when to use it', async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe('object');
      // Arguments are checked strictly: a misspelled key is reported, not silently dropped.
      expect((tool.inputSchema as JsonSchema).additionalProperties, tool.name).toBe(false);
    }
  });

  it('gives the snapshot tool the seed input contract: properties, bounds and defaults', async () => {
    const { tools } = await server.client.listTools();
    for (const name of SNAPSHOT_TOOLS) {
      const schema = tools.find((t) => t.name === name)?.inputSchema as JsonSchema;
      const p = schema.properties ?? {};
      expect(Object.keys(p).sort()).toEqual(['exclude', 'followSymlinks', 'include', 'maxBytes', 'maxFiles', 'respectGitignore', 'root', 'withContentDigest']);
      expect(schema.required ?? []).toEqual([]);
      expect(p.root?.type).toBe('string');
      expect(p.include).toMatchObject({ type: 'array', items: { type: 'string', minLength: 1 } });
      expect(p.exclude).toMatchObject({ type: 'array', items: { type: 'string', minLength: 1 } });
      expect(p.maxFiles).toMatchObject({ type: 'integer', minimum: 1, maximum: 50_000, default: 20_000 });
      expect(p.maxBytes).toMatchObject({ type: 'integer', minimum: 0, default: 64 * 1024 * 1024 });
      expect(p.followSymlinks).toMatchObject({ const: false, default: false });
      expect(p.respectGitignore).toMatchObject({ type: 'boolean', default: true });
      expect(p.withContentDigest).toMatchObject({ type: 'boolean', default: true });
    }
  });

  it('annotates the snapshot tool read-only, idempotent and closed-world, and gives it the RepoSnapshot output schema', async () => {
    const { tools } = await server.client.listTools();
    for (const name of SNAPSHOT_TOOLS) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
      const out = tool?.outputSchema as JsonSchema;
      expect(Object.keys(out.properties ?? {}).sort()).toEqual(['apiVersion', 'body', 'kind', 'root', 'snapshotDigest']);
    }
  });

  it('marks the writing tools as not read-only and the reading ones as read-only', async () => {
    const { tools } = await server.client.listTools();
    const readOnly = Object.fromEntries(tools.map((t) => [t.name, t.annotations?.readOnlyHint]));
    expect(readOnly).toMatchObject({ cairn_session_pre: false, cairn_session_post: false, cairn_stage_write: false, cairn_stage_read: true, cairn_store_list: true, cairn_store_show: true });
    for (const t of tools) expect(t.annotations?.openWorldHint, t.name).toBe(false);
  });

  it('names the required arguments of the other tools', async () => {
    const { tools } = await server.client.listTools();
    const required = Object.fromEntries(tools.map((t) => [t.name, [...((t.inputSchema as JsonSchema).required ?? [])].sort()]));
    expect(required).toMatchObject({
      cairn_session_pre: [],
      cairn_session_post: [],
      cairn_stage_write: ['body', 'command', 'recommendedNext', 'stage', 'task'],
      cairn_stage_read: ['task'],
      cairn_store_list: [],
      cairn_store_show: ['sessionId'],
    });
  });
});

describe('schema resource', () => {
  it('lists the RepoSnapshot schema under the axiom and the cairn URI', async () => {
    const { resources } = await server.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['axiom://schema/RepoSnapshot', 'cairn://schema/RepoSnapshot']);
    for (const r of resources) expect(r.mimeType).toBe('application/schema+json');
  });

  it('serves a valid draft 2020-12 JSON Schema, the same document as schemas/RepoSnapshot.schema.json', async () => {
    const onDisk: unknown = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'schemas', 'RepoSnapshot.schema.json'), 'utf8'));
    for (const uri of ['axiom://schema/RepoSnapshot', 'cairn://schema/RepoSnapshot']) {
      const { contents } = await server.client.readResource({ uri });
      expect(contents).toHaveLength(1);
      const text = (contents[0] as { text?: string }).text ?? '';
      const schema = JSON.parse(text) as Record<string, unknown>;
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema).toEqual(onDisk);
      const ajv = new Ajv2020({ strict: true });
      expect(ajv.validateSchema(schema)).toBe(true);
      const validate = ajv.compile(schema);
      expect(validate({ apiVersion: 'axiom.dev/v2', kind: 'RepoSnapshot', root: { kind: 'relative' }, snapshotDigest: `sha256:${'0'.repeat(64)}`, body: { files: [], truncated: false, counts: { files: 0, bytes: 0 } } })).toBe(true);
      expect(validate({ apiVersion: 'axiom.dev/v2', kind: 'RepoSnapshot' })).toBe(false);
    }
  });

  it('answers an unknown resource URI with a protocol error, and keeps serving', async () => {
    await expect(server.client.readResource({ uri: 'cairn://schema/Nope' })).rejects.toThrow(/not found/i);
    const { resources } = await server.client.listResources();
    expect(resources).toHaveLength(2);
  });
});
