/**
 * A JSON Schema checker for the subset in pi 1.6.0's compiled models.json schema (TypeBox `Check`;
 * snapshot in `src/core/data/models-json-schema.json`). Numbers must be finite, as in TypeBox.
 */

export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  patternProperties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
  const?: unknown;
  enum?: unknown[];
  items?: SchemaNode;
  maxItems?: number;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

/** `path` in pi's `formatValidationPath` style (`root` for the top). */
export interface SchemaError {
  path: string;
  message: string;
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    default:
      return true;
  }
}

const join = (base: string, key: string | number): string => (base ? `${base}.${key}` : String(key));

function check(node: SchemaNode, value: unknown, at: string, errors: SchemaError[]): void {
  if (node.anyOf && !node.anyOf.some((branch) => validateSchema(branch, value).length === 0))
    errors.push({ path: at || "root", message: "must match a schema in anyOf" });
  if (node.type !== undefined && !typeMatches(node.type, value)) {
    errors.push({ path: at || "root", message: `must be ${node.type}` });
    return;
  }
  if ("const" in node && value !== node.const)
    errors.push({ path: at || "root", message: "must be equal to constant" });
  if (node.enum && !node.enum.includes(value))
    errors.push({ path: at || "root", message: "must be equal to one of the allowed values" });
  if (typeof value === "string" && node.minLength !== undefined && value.length < node.minLength)
    errors.push({ path: at || "root", message: `must NOT have fewer than ${node.minLength} characters` });
  if (typeof value === "number") {
    if (node.minimum !== undefined && !(value >= node.minimum))
      errors.push({ path: at || "root", message: `must be >= ${node.minimum}` });
    if (node.maximum !== undefined && !(value <= node.maximum))
      errors.push({ path: at || "root", message: `must be <= ${node.maximum}` });
    if (node.exclusiveMinimum !== undefined && !(value > node.exclusiveMinimum))
      errors.push({ path: at || "root", message: `must be > ${node.exclusiveMinimum}` });
  }
  if (Array.isArray(value)) {
    if (node.maxItems !== undefined && value.length > node.maxItems)
      errors.push({ path: at || "root", message: `must NOT have more than ${node.maxItems} items` });
    if (node.items) value.forEach((item, index) => check(node.items!, item, join(at, index), errors));
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const missing = (node.required ?? []).filter((key) => !Object.prototype.hasOwnProperty.call(obj, key));
    if (missing.length > 0)
      errors.push({ path: join(at, missing[0]), message: `must have required properties ${missing.join(", ")}` });
    for (const [key, child] of Object.entries(node.properties ?? {}))
      if (Object.prototype.hasOwnProperty.call(obj, key) && obj[key] !== undefined)
        check(child, obj[key], join(at, key), errors);
    const patterns = Object.entries(node.patternProperties ?? {}).map(([p, s]) => [new RegExp(p), s] as const);
    if (patterns.length > 0)
      for (const key of Object.keys(obj))
        for (const [pattern, child] of patterns) if (pattern.test(key)) check(child, obj[key], join(at, key), errors);
  }
}

/** Every violation (empty = valid), in document order. */
export function validateSchema(schema: SchemaNode, value: unknown): SchemaError[] {
  const errors: SchemaError[] = [];
  check(schema, value, "", errors);
  return errors;
}
