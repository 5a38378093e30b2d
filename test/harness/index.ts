// The mock Infinity runtime for end-to-end tests and the demo. Start here:
//
//   const inf = await MockInfinity.start({ infinityHome });
//   const session = await inf.createSession({ cwd });          // reads {cwd}/.infinity/rap.json
//   await inf.sendUserText(session, "remember that …");
//   const round = await inf.model.nextRequest();               // the exact model request
//   round.sendToolCall("tooluse_1", "memory_remember", { content: "…" }).finish();
//   console.log(inf.transcript());
//   await inf.shutdown();
export { MockInfinity, killAllCommandServers, type CreateSessionOptions, type MockInfinityOptions, type ThreadConfigFilter, type PromptBudget, type PromptPrefix, type ThreadConfig, type Tool } from "./runtime.js";
export { ScriptedModel, ModelRound, DEFAULT_MODEL_ENTRY, highUsage, toolResultTexts, type CompletionRequest, type ModelEntry, type RigMessage, type ToolDefinition, type Usage } from "./model.js";
export { formatTranscript, buildDisplaySegments, type AgentEvent, type HarnessEvent, type TranscriptOptions } from "./events.js";
export { buildPreamble, DEFAULT_PROMPT, daemonExtraSystemPrompt, rustDebugString, threadIdsOfPreamble } from "./preamble.js";
export { loadMergedRapConfig, mergeRapConfigs, loadRapConfigFile, ToolsConfig, ToolSetConfig } from "./rap-config.js";
export { startCallbackServer, prepareCallback, convertCallback, parseCallbackBody, type CallbackDelivery, type CallbackServerHandle } from "./callback-server.js";
export { ManagedRapServer, spawnRapServer, fetchManifest, type ServerSpec, type ServerEvent } from "./command-servers.js";
