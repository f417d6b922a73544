package dev.ebb.operator.route;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;

/** How one kind of router answers "do you still route to these members?", read from its own admin answer. */
interface RouterDialect {
    /**
     * @param body what the router answered at its admin path
     * @param members the retirement's target members
     */
    RouterView read(String body, List<Pod> members);
}
