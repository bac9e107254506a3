// pkg/controller's public face: the controller and the agent (one Controller, its process shape chosen
// by its options: push, sharded, agent), what runs them (the Lease holding, the ops endpoints), and the
// names and defaults the CLI, the chart and the docs quote. Everything else is the package's own. The
// agent's command and what it shares with the controller's (pkg/cli/agent.ts, daemon.ts) import the modules
// they run one by one instead: this face loads the controller's shape, which an agent never runs.

export { Controller, type ControllerOptions, type MemberAccess } from './manager.js';
export { controllerParts } from './controller-parts.js';
export { PROCESSES, processShape, type ProcessShape } from './processes.js';
export { CONTROLLER_DEFAULTS, DEFAULT_LEASE_NAMESPACE } from './defaults.js';
export { runHoldingLease, type HoldingLeaseOptions } from './leader.js';
export { serveOps, type OpsServerOptions } from './ops.js';
export { SHARD_LABEL } from './shards.js';
export { NAMESPACE_UID_LABEL, skippedNamespaces } from './namespaces.js';
export { agentFieldManager } from './agent.js';
export { CONTROLLER_FIELD_MANAGER } from './ownership.js';
export { NOT_READY_TAINT, UNREACHABLE_TAINT } from './health-taints.js';
export { executionSpace } from './work.js';
export { bindingObject } from './binding.js';
