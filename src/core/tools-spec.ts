/** A tool definition as sent to the model (Anthropic Messages API shape). Pure data. */
export interface ToolSpec {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}
