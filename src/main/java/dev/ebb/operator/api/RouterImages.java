package dev.ebb.operator.api;

/**
 * The images a router's layout runs.
 *
 * @param router the router itself (llm-d's endpoint picker, vLLM's router, SGLang's gateway)
 * @param dataPlane the proxy that carries clients' requests beside llm-d's endpoint picker; unused by the others
 * @param routingProxy the proxy in front of each direct decoder under llm-d's router; unused by the others
 */
public record RouterImages(String router, String dataPlane, String routingProxy) {
    /** The same images with the router's own replaced, as spec.router.image asks. */
    public RouterImages withRouter(String image) {
        return new RouterImages(image, dataPlane, routingProxy);
    }
}
