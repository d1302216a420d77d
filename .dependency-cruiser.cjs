// The layers of src/ and routes/, lowest first (CONTRIBUTING.md explains them). A file may
// import from its own folder and from any lower layer, never from a higher one nor from
// another folder of its own layer; no import circle at all, type-only imports included.
// `npm test` runs this check (`npm run lint:layers`).
/** @type {readonly { readonly name: string; readonly paths: readonly string[] }[]} */
const layers = [
  { name: 'base', paths: ['src/(json|clock|canonical-json|output-json|service-error|package-version)\\.ts$', 'src/format/', 'src/text/', 'src/types/'] },
  { name: 'events', paths: ['src/events/'] },
  { name: 'config', paths: ['src/config/'] },
  { name: 'concurrency', paths: ['src/concurrency/'] },
  { name: 'memory', paths: ['src/memory/'] },
  { name: 'observability', paths: ['src/observability/'] },
  { name: 'net', paths: ['src/net/'] },
  { name: 'sandbox', paths: ['src/sandbox/'] },
  { name: 'models', paths: ['src/models/'] },
  { name: 'brain', paths: ['src/brain/'] },
  { name: 'store', paths: ['src/store/'] },
  { name: 'durable', paths: ['src/durable/'] },
  { name: 'tools', paths: ['src/tools/'] },
  { name: 'arguments', paths: ['src/arguments/'] },
  { name: 'loop', paths: ['src/loop/'] },
  { name: 'turns', paths: ['src/turns/'] },
  { name: 'webhooks', paths: ['src/webhooks/'] },
  { name: 'features', paths: ['src/approvals/', 'src/workflows/', 'src/background-jobs/', 'src/schedules/'] },
  { name: 'inspector', paths: ['src/inspector/'] },
  { name: 'http', paths: ['src/http/'] },
  { name: 'routes', paths: ['routes/'] },
  { name: 'app', paths: ['src/app\\.ts$'] },
  { name: 'runtime', paths: ['src/runtime\\.ts$'] },
  { name: 'server', paths: ['src/server\\.ts$'] },
];

const anchored = (paths) => `^(${paths.join('|')})`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle: two files that need each other are one concept, or one of them owes the other an interface.',
      severity: 'error',
      from: { path: '^(src|routes)/' },
      to: { circular: true },
    },
    {
      name: 'layer-unlisted',
      comment: 'A file outside every layer of .dependency-cruiser.cjs: add its folder to the list (and to CONTRIBUTING.md).',
      severity: 'error',
      from: { path: '^(src|routes)/', pathNot: anchored(layers.flatMap((layer) => layer.paths)) },
      to: {},
    },
    ...layers.flatMap((layer, index) => {
      const higher = layers.slice(index + 1).flatMap((above) => above.paths);
      const rules = [];
      if (higher.length > 0) {
        rules.push({
          name: `layer-${layer.name}`,
          comment: `${layer.name} imports from a higher layer: move what it needs down, or define an interface here that the higher layer implements (runtime.ts plugs it in).`,
          severity: 'error',
          from: { path: anchored(layer.paths) },
          to: { path: anchored(higher) },
        });
      }
      // The folders of one layer are peers: none imports another.
      for (const own of layer.paths.length > 1 ? layer.paths : []) {
        rules.push({
          name: `layer-${layer.name}-peers`,
          comment: `${own} imports a peer of its layer (${layer.name}); what both need belongs to a lower layer.`,
          severity: 'error',
          from: { path: anchored([own]) },
          to: { path: anchored(layer.paths.filter((other) => other !== own)) },
        });
      }
      return rules;
    }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|test|bench|scripts|ui)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
// For test/house/layers.test.ts (which checks CONTRIBUTING.md names them in this order); not
// enumerable, since dependency-cruiser refuses keys it does not know.
Object.defineProperty(module.exports, 'layers', { value: layers, enumerable: false });
