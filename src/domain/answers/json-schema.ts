/**
 * JSON Schema clean-up shared by every place that publishes a schema (the OpenAPI document, the
 * MCP tool schemas). TypeBox's Enum leaves out `type`; OpenAPI 3.0 tools and several MCP clients
 * expect `"type": "string"` (or number, boolean) next to every `enum`, so it is added in place.
 */
export function typeEnums(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(typeEnums);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const obj = node as Record<string, unknown>;
  if (Array.isArray(obj.enum) && obj.type === undefined && obj.enum.length > 0) {
    if (obj.enum.every((v) => typeof v === 'string')) obj.type = 'string';
    else if (obj.enum.every((v) => typeof v === 'number')) obj.type = 'number';
    else if (obj.enum.every((v) => typeof v === 'boolean')) obj.type = 'boolean';
  }
  for (const value of Object.values(obj)) typeEnums(value);
}
