package dev.ebb.operator.retire;

import java.util.List;

/** What the machine asks the shell to do. */
public sealed interface Action {
    /** Set serving=false on these members, so Services and routers drop them. */
    record Withdraw(List<Member> members) implements Action {}

    /**
     * Ask the router itself to drop these members: their withdrawal is written, yet the router still lists them or
     * cannot say. For a router that would see the label only later; one that follows it at once needs nothing.
     */
    record Unroute(List<Member> members) implements Action {}

    /** Put serving=true back: the replica is kept. */
    record Restore(List<Member> members) implements Action {}

    /** Read these answering members before the next pass. */
    record ReadMembers(List<String> members) implements Action {}

    /** Delete these members, each only if its uid still matches. */
    record Delete(List<Member> members) implements Action {}

    /** Tell the user: a Kubernetes Event on the ModelDeployment. */
    record Announce(boolean warning, Reason reason, String message) implements Action {}
}
