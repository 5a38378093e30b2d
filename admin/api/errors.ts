// The admin API's error: a stable code, the request field at fault, and how each transport
// reports it (HTTP status, gRPC status). Core and store errors are translated here, once.
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { z } from "zod";
import { isCoreError } from "../../core/errors.js";
import { StoreError } from "../../stores/traits.js";

export type ApiErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "method_not_allowed"
  | "too_large"
  | "unsupported_media_type"
  | "unavailable"
  | "internal";

export class ApiError extends Error {
  constructor(
    readonly code: ApiErrorCode | string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

const HTTP: Record<string, number> = {
  invalid_argument: 400,
  refused_credential: 400,
  refused_injection: 400,
  unauthenticated: 401,
  forbidden: 403,
  disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  unavailable: 503,
  cancelled: 503,
  internal: 500,
};

const GRPC: Record<string, GrpcStatus> = {
  invalid_argument: GrpcStatus.INVALID_ARGUMENT,
  refused_credential: GrpcStatus.INVALID_ARGUMENT,
  refused_injection: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  disabled: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conflict: GrpcStatus.FAILED_PRECONDITION,
  unavailable: GrpcStatus.UNAVAILABLE,
  cancelled: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
};

/** Any thrown value as an ApiError; unknown failures become "internal" without leaking details. */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (isCoreError(e)) {
    const field = (e as { field?: unknown }).field;
    return new ApiError(e.code, e.message, typeof field === "string" ? field : undefined);
  }
  if (e instanceof StoreError) {
    if (e.code === "not_found") return new ApiError("not_found", e.message);
    if (e.code === "constraint") return new ApiError("conflict", e.message);
  }
  return new ApiError("internal", "the admin service failed on this request; see the server log");
}

export function httpStatusOf(e: ApiError): number {
  return HTTP[e.code] ?? 500;
}

export function grpcStatusOf(e: ApiError): GrpcStatus {
  return GRPC[e.code] ?? GrpcStatus.INTERNAL;
}

/** The first zod issue as an ApiError naming the dotted field path (e.g. "ids.0"). */
export function fromZod(err: z.ZodError, what = "the request"): ApiError {
  const issue = err.issues[0];
  if (!issue) return new ApiError("invalid_argument", `${what} is invalid`);
  if (issue.code === "unrecognized_keys") {
    const keys = (issue as { keys: string[] }).keys;
    const at = issue.path.length > 0 ? `${issue.path.join(".")}.` : "";
    return new ApiError("invalid_argument", `unknown field "${at}${keys[0]}" in ${what}; remove it (see admin/api/CONTRACT.md)`, `${at}${keys[0]}`);
  }
  const field = issue.path.join(".");
  if (field.length === 0) return new ApiError("invalid_argument", `${what}: ${issue.message}`);
  return new ApiError("invalid_argument", `"${field}": ${issue.message}`, field);
}
