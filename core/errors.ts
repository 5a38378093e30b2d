// Domain errors. One class per layer with a stable `code`; tool handlers turn them into
// `Error: …` text that tells the model what to change.

export type CoreErrorCode =
  | "invalid_argument"
  | "not_found"
  | "forbidden"
  | "refused_credential"
  | "refused_injection"
  | "conflict"
  | "disabled"
  | "cancelled"
  | "unavailable";

export class CoreError extends Error {
  constructor(
    readonly code: CoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CoreError";
  }
}

export function isCoreError(e: unknown): e is CoreError {
  return e instanceof CoreError;
}
