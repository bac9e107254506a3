// Member clusters: who they are (kubeconfig contexts + Cluster objects) and how to reach them.
export {
  fleetFromKubeconfig,
  KubeconfigClusterFactory,
  CLUSTER_API_VERSION,
  type ClusterDocument,
  type ClusterFactory,
  type Fleet,
  type ContextMember,
} from './members.js';
