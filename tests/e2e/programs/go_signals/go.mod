module gosignals

go 1.19
