package dev.ebb.operator.reconcile;

/** Text written into status stays within the size its field allows, however many replicas it names. Pure. */
final class Sentences {
    private static final String CUT = "...";

    private Sentences() {}

    /** The sentence whole when it fits, else cut to {@code max} characters with an ellipsis saying so. */
    static String bounded(String sentence, int max) {
        return sentence.length() <= max ? sentence : sentence.substring(0, max - CUT.length()) + CUT;
    }
}
