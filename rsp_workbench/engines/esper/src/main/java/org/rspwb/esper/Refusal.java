package org.rspwb.esper;

/** The adapter cannot translate what it was given (a query or parameter): its message is the whole error. */
final class Refusal extends RuntimeException {
    Refusal(String message) {
        super(message);
    }
}
