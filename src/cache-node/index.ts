// The build cache node as a library: start a node, load and validate configuration files, hash
// secrets for them.

export { startCacheNode, DEFAULT_PORT, type CacheNode, type CacheNodeOptions, type PasswordCheckStats } from './server.js';
export { loadConfigFile, parseConfigText, formatFaults, DEFAULTS, type NodeConfig, type ConfigResult, type Fault } from './config.js';
export { hashSecret, parseHashedSecret, verifySecret } from './secret.js';
export { cacheNodeConfigSchema, HASHED_SECRET_PATTERN } from './schema.js';
