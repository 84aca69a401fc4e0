export { type AgentConfig, ConfigError, loadConfig } from "./config.ts";
export { type FileInfo, FileInfoError, fileInfo } from "./filesystem/file-info.ts";
export { modeString } from "./filesystem/mode-string.ts";
export { type AgentServer, startAgentServer } from "./rpc/agent-server.ts";
