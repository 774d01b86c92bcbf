import ts from "typescript-5";

/** One property of a hand-written Env type. */
export type EnvProperty = { name: string; optional: boolean };

/** What the compiler says about one worker's entry module. */
export type EntryFacts = {
  /** Classes the entry exports that extend `DurableObject` (from `cloudflare:workers`). */
  durableObjectClasses: string[];
  /** The Env type named by the default export's `satisfies ExportedHandler<Env>`; null when there is none. */
  env: { typeName: string; file: string; properties: EnvProperty[] } | null;
};

/**
 * Reads every entry module's exported Durable Object classes and its Env
 * type's properties (intersections included) with the TypeScript 5 compiler
 * API, in one program over all entries (the repository's `tsc` is TypeScript
 * 7, which has no API). Paths are absolute; `relative` names files in the result.
 */
export function readEntryFacts(entries: string[], tsconfigPath: string, relative: (file: string) => string): Map<string, EntryFacts> {
  const parsed = ts.getParsedCommandLineOfConfigFile(tsconfigPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const options: ts.CompilerOptions = { ...(parsed?.options ?? {}), noEmit: true, skipLibCheck: true };
  // Package types other than the Workers runtime's are read as empty modules: the facts here are the
  // repository's own declarations (and DurableObject's), and viem's, zod's or Bun's types would triple the time.
  const host = ts.createCompilerHost(options);
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName.includes("/node_modules/") && !fileName.includes("/@cloudflare/workers-types/") && !fileName.includes("/typescript-5/lib/")
      ? ts.createSourceFile(fileName, "export {};", languageVersion)
      : readSource(fileName, languageVersion, ...rest);
  const program = ts.createProgram({ rootNames: entries, options, host });
  const checker = program.getTypeChecker();
  const out = new Map<string, EntryFacts>();
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    if (!source) throw new Error(`TypeScript cannot read ${entry}`);
    out.set(entry, { durableObjectClasses: durableObjectExports(checker, source), env: envOfDefaultExport(checker, source, relative) });
  }
  return out;
}

function durableObjectExports(checker: ts.TypeChecker, source: ts.SourceFile): string[] {
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) return [];
  const names: string[] = [];
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declaration = symbol.declarations?.find(ts.isClassDeclaration);
    if (declaration && extendsDurableObject(checker, declaration)) names.push(exported.name);
  }
  return names.sort();
}

/** True when the class, or a class it extends, extends one named `DurableObject`. */
function extendsDurableObject(checker: ts.TypeChecker, declaration: ts.ClassDeclaration): boolean {
  let type: ts.Type | undefined = checker.getTypeAtLocation(declaration);
  for (let depth = 0; type && depth < 10; depth++) {
    const bases: ts.BaseType[] = type.isClassOrInterface() ? checker.getBaseTypes(type) : [];
    if (bases.some((base) => base.getSymbol()?.name === "DurableObject")) return true;
    type = bases[0];
  }
  return false;
}

function envOfDefaultExport(checker: ts.TypeChecker, source: ts.SourceFile, relative: (file: string) => string): EntryFacts["env"] {
  for (const statement of source.statements) {
    if (!ts.isExportAssignment(statement)) continue;
    // `export default { … } satisfies ExportedHandler<Env>`, or that object passed to a wrapper
    // (`withRequiredSecrets(REQUIRED_SECRETS, { … } satisfies ExportedHandler<Env>)`).
    const expression = ts.isCallExpression(statement.expression)
      ? (statement.expression.arguments.find(ts.isSatisfiesExpression) ?? statement.expression)
      : statement.expression;
    if (!ts.isSatisfiesExpression(expression)) continue;
    const handler = expression.type;
    if (!ts.isTypeReferenceNode(handler) || handler.typeName.getText(source) !== "ExportedHandler") continue;
    const envNode = handler.typeArguments?.[0];
    if (!envNode || !ts.isTypeReferenceNode(envNode)) continue;
    const type = checker.getTypeFromTypeNode(envNode);
    const aliasDeclaration = checker.getSymbolAtLocation(envNode.typeName);
    const target = aliasDeclaration && aliasDeclaration.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(aliasDeclaration) : aliasDeclaration;
    const declaredIn = target?.declarations?.[0]?.getSourceFile().fileName ?? source.fileName;
    // getPropertiesOfType flattens intersections (ApiEnv = {…} & LiveChainEnv) and mapped types (Partial<Record<…>>).
    const properties = checker.getPropertiesOfType(type).map((p) => ({ name: p.name, optional: (p.flags & ts.SymbolFlags.Optional) !== 0 }));
    return { typeName: envNode.typeName.getText(source), file: relative(declaredIn), properties: properties.sort((a, b) => a.name.localeCompare(b.name)) };
  }
  return null;
}

/** The binding names of `interface Env` in `declare namespace Cloudflare`, as `wrangler types` writes it (syntax only). */
export function generatedEnvNames(declarations: string): string[] {
  const source = ts.createSourceFile("worker-configuration.d.ts", declarations, ts.ScriptTarget.ES2022, false);
  const names: string[] = [];
  const visit = (node: ts.Node, inCloudflare: boolean): void => {
    if (ts.isModuleDeclaration(node)) {
      const inside = inCloudflare || node.name.text === "Cloudflare";
      if (node.body) ts.forEachChild(node.body, (child) => visit(child, inside));
      return;
    }
    if (inCloudflare && ts.isInterfaceDeclaration(node) && node.name.text === "Env") {
      for (const member of node.members) if (member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name))) names.push(member.name.text);
    }
  };
  ts.forEachChild(source, (node) => visit(node, false));
  return names.sort();
}
