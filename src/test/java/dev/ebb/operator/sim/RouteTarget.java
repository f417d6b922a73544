package dev.ebb.operator.sim;

import java.net.URI;

/** Where one request goes: the Pod chosen and its engine's base address, or no Pod and a router's client entry. */
public record RouteTarget(String pod, URI base) {}
