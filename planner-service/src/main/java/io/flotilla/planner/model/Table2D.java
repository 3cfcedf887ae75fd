package io.flotilla.planner.model;

import java.util.Arrays;

/**
 * A function f(x, y) given on a grid: rows at ascending {@code xs}, columns at ascending {@code ys}.
 * {@link #value} interpolates bilinearly between grid points and clamps outside the grid to the
 * nearest edge (no extrapolation: a profile says nothing beyond what was measured).
 */
public record Table2D(double[] xs, double[] ys, double[][] values) {

    public Table2D {
        xs = xs.clone();
        ys = ys.clone();
        ascending("x", xs);
        ascending("y", ys);
        if (values.length != xs.length) {
            throw new IllegalArgumentException("table has " + values.length + " rows, expected " + xs.length);
        }
        double[][] copy = new double[values.length][];
        for (int i = 0; i < values.length; i++) {
            if (values[i].length != ys.length) {
                throw new IllegalArgumentException("table row " + i + " has " + values[i].length + " values, expected " + ys.length);
            }
            for (double v : values[i]) {
                if (!Double.isFinite(v) || v < 0) {
                    throw new IllegalArgumentException("table values must be finite and non-negative, got " + v);
                }
            }
            copy[i] = values[i].clone();
        }
        values = copy;
    }

    public double value(double x, double y) {
        int i = lower(xs, x);
        int j = lower(ys, y);
        double tx = fraction(xs, i, x);
        double ty = fraction(ys, j, y);
        int i1 = Math.min(i + 1, xs.length - 1);
        int j1 = Math.min(j + 1, ys.length - 1);
        double top = values[i][j] + (values[i][j1] - values[i][j]) * ty;
        double bottom = values[i1][j] + (values[i1][j1] - values[i1][j]) * ty;
        return top + (bottom - top) * tx;
    }

    public double maxY() {
        return ys[ys.length - 1];
    }

    /** Index of the last grid point ≤ v (0 below the grid, last index above it). */
    private static int lower(double[] grid, double v) {
        if (v <= grid[0]) {
            return 0;
        }
        int k = Arrays.binarySearch(grid, v);
        int idx = k >= 0 ? k : -k - 2;
        return Math.min(idx, grid.length - 1);
    }

    private static double fraction(double[] grid, int i, double v) {
        if (i >= grid.length - 1 || v <= grid[0]) {
            return 0;
        }
        return Math.min(1, (v - grid[i]) / (grid[i + 1] - grid[i]));
    }

    private static void ascending(String axis, double[] grid) {
        if (grid.length == 0) {
            throw new IllegalArgumentException("the " + axis + " axis is empty");
        }
        for (int i = 1; i < grid.length; i++) {
            if (!(grid[i] > grid[i - 1])) {
                throw new IllegalArgumentException("the " + axis + " axis must be strictly ascending: " + Arrays.toString(grid));
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Table2D t && Arrays.equals(xs, t.xs) && Arrays.equals(ys, t.ys) && Arrays.deepEquals(values, t.values);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * Arrays.hashCode(xs) + Arrays.hashCode(ys)) + Arrays.deepHashCode(values);
    }

    @Override
    public String toString() {
        return "Table2D" + Arrays.toString(xs) + "x" + Arrays.toString(ys);
    }
}
