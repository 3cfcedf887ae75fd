package io.flotilla.planner.predict;

import java.util.Locale;

/**
 * Which predictor and its parameters; {@link #create} builds one (wrapped in the warm-up).
 *
 * @param kind        constant, moving-average, holt or holt-winters
 * @param warmup      observations before the chosen model is trusted (constant until then)
 * @param window      moving-average window
 * @param alpha       level smoothing (Holt, Holt-Winters)
 * @param beta        trend smoothing
 * @param gamma       seasonal smoothing (Holt-Winters)
 * @param damping     trend damping φ in (0, 1] (Holt, Holt-Winters); 1 = undamped
 * @param season      season length in intervals (Holt-Winters)
 */
public record PredictorSettings(String kind, int warmup, int window, double alpha, double beta, double gamma,
                                double damping, int season) {

    public LoadPredictor create() {
        LoadPredictor model = switch (kind.toLowerCase(Locale.ROOT)) {
            case "constant" -> new ConstantPredictor();
            case "moving-average" -> new MovingAveragePredictor(window);
            case "holt" -> new HoltPredictor(alpha, beta, damping);
            case "holt-winters" -> new HoltWintersPredictor(alpha, beta, gamma, damping, season);
            default -> throw new IllegalArgumentException("unknown predictor " + kind
                    + " (constant, moving-average, holt, holt-winters)");
        };
        return new WarmupPredictor(model, warmup);
    }
}
