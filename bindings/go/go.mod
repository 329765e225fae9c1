module github.com/dinput/dinput/bindings/go

go 1.19
